# A C project of six files and a Makefile in ./p, for tests/test_programs.py.
mkdir p && cd p
for i in 1 2 3 4 5 6; do
cat > f$i.c <<EOC
#include <stdio.h>
int f$i(void){ printf("%d\n", $i); return $i; }
EOC
done
cat > main.c <<'EOC'
int f1(void);int f2(void);int f3(void);int f4(void);int f5(void);int f6(void);
int main(void){return f1()+f2()+f3()+f4()+f5()+f6()-21;}
EOC
printf 'OBJ=main.o f1.o f2.o f3.o f4.o f5.o f6.o\nprog: $(OBJ)\n\tcc -o $@ $(OBJ)\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\nclean:\n\trm -f $(OBJ)\n' > Makefile
