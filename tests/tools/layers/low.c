/* The bottom file of the fixture: calls nothing. */
int low_f(void);

int low_f(void)
{
	return 1;
}
