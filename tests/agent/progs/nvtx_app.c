/*
 * nvtx_app.c — uses the real header-only nvtx3 API the way applications do:
 * push/pop (nested), start/end across threads, marks, a named domain with a
 * registered string.  Prints the push depths it got (-2 without injection).
 */
#include <pthread.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

static nvtxRangeId_t cross;

static void *ender(void *arg)
{
	(void)arg;
	nvtxRangeEnd(cross);
	return NULL;
}

int main(void)
{
	nvtxDomainHandle_t dom = nvtxDomainCreateA("mydomain");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered-name");
	nvtxEventAttributes_t a = {0};
	pthread_t th;
	int d0, d1;

	d0 = nvtxRangePushA("outer");
	d1 = nvtxRangePushA("inner");
	nvtxMarkA("hello-mark");
	nvtxRangePop();
	nvtxRangePop();

	cross = nvtxRangeStartA("cross-thread");
	pthread_create(&th, NULL, ender, NULL);
	pthread_join(th, NULL);

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxDomainRangePushEx(dom, &a);
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "dom-mark";
	nvtxDomainMarkEx(dom, &a);
	nvtxDomainRangePop(dom);
	nvtxDomainDestroy(dom);
	printf("nvtx_app: depths %d %d\n", d0, d1);
	return 0;
}
