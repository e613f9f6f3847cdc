/* loop_a.c and loop_b.c call each other: a cycle of two files. */
int loop_a(int n);
int loop_b(int n);

int loop_b(int n)
{
	return n > 0 ? loop_a(n - 1) : 1;
}
