/* placeholder: replaced by the launcher */
int main(void)
{
	return 0;
}
