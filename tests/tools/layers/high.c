/* Calls low.c: a call down when low.c is the lower layer. */
int low_f(void);
int high_f(void);

int high_f(void)
{
	return low_f() + 1;
}
