// Node's file I/O for test_programs.py: libuv runs each fs call on a
// thread of its pool, so 20 writes and 20 reads go at once from up to
// four threads; positional reads and writes, a copy, a rename, an
// unlink, appends and a piped stream.
const fs = require('fs');
const fsp = fs.promises;

async function main() {
	const writes = [];
	for (let i = 0; i < 20; i++)
		writes.push(fsp.writeFile(`n${i}.txt`, 'x'.repeat(1000 * (i + 1))));
	await Promise.all(writes);
	const reads = [];
	for (let i = 0; i < 20; i++)
		reads.push(fsp.readFile(`n${i}.txt`));
	const bufs = await Promise.all(reads);
	await fsp.copyFile('n3.txt', 'copy3.txt');
	await fsp.rename('n4.txt', 'moved4.txt');
	await fsp.unlink('n5.txt');
	const fh = await fsp.open('n6.txt', 'r+');
	await fh.read(Buffer.alloc(100), 0, 100, 50);
	await fh.write('hello', 10);
	await fh.close();
	fs.appendFileSync('log.txt', 'a\n');
	fs.appendFileSync('log.txt', 'b\n');
	await new Promise((done) => fs.createReadStream('n19.txt')
		.pipe(fs.createWriteStream('stream.txt')).on('finish', done));
	const total = bufs.reduce((sum, b) => sum + b.length, 0);
	process.stdout.write(`${total}\n`);
}

main();
