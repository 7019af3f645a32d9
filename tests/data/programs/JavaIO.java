// A JVM's file I/O for test_programs.py: a thread pool writing files at
// once, positional reads and writes (pread64/pwrite64), a seek, a mapped
// read, a move, a delete and a directory walk, all from many threads of
// one process (GATK, Picard and Nextflow's own scripts are JVM programs).
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

public class JavaIO {
	static void write(int k) {
		try {
			Files.writeString(Path.of("j" + k + ".txt"),
					  "v".repeat(500 * (k + 1)));
		} catch (Exception e) {
			throw new RuntimeException(e);
		}
	}

	public static void main(String[] args) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(4);
		for (int i = 0; i < 16; i++) {
			final int k = i;
			pool.submit(() -> write(k));
		}
		pool.shutdown();
		if (!pool.awaitTermination(60, TimeUnit.SECONDS))
			throw new RuntimeException("pool did not finish");
		long n = 0;
		for (int i = 0; i < 16; i++)
			n += Files.readAllBytes(Path.of("j" + i + ".txt")).length;
		try (FileChannel ch = FileChannel.open(Path.of("j3.txt"),
				StandardOpenOption.READ, StandardOpenOption.WRITE)) {
			ByteBuffer b = ByteBuffer.allocate(100);
			n += ch.read(b, 50);
			n += ch.write(ByteBuffer.wrap("hello".getBytes()), 10);
			MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_ONLY,
						    0, 1000);
			n += m.get(999);
		}
		try (RandomAccessFile f = new RandomAccessFile("j4.txt", "rw")) {
			f.seek(700);
			f.write("seek".getBytes());
		}
		Files.copy(Path.of("j1.txt"), Path.of("copy1.txt"));
		Files.move(Path.of("j2.txt"), Path.of("moved2.txt"));
		Files.delete(Path.of("j5.txt"));
		try (Stream<Path> s = Files.walk(Path.of("."))) {
			n += s.count();
		}
		System.out.println(n);
	}
}
