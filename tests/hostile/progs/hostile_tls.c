/* hostile_tls.c — libhostile_tls.so for dlopen_static_tls: 1 KiB of
 * initial-exec TLS (the static TLS surplus). */
__attribute__((tls_model("initial-exec"))) static __thread unsigned char tls_bytes[1024];

__attribute__((visibility("default"))) int hostile_tls_sum(int v)
{
	int s = 0;

	for (int i = 0; i < 1024; i++)
		tls_bytes[i] = (unsigned char)v;
	for (int i = 0; i < 1024; i++)
		s += tls_bytes[i];
	return s;
}
