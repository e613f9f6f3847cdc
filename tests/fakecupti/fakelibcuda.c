/*
 * fakelibcuda.c — a test-only libcuda.so.1 holding just cuDeviceGetAttribute
 * with H100 values, so the CUDA layer's lookup of what CUpti_ActivityDevice5
 * lacks (opt-in and reserved shared memory per block) runs in tests.  Loaded
 * only as a dependency of the simulated libcupti.so.13.
 */
#include <stddef.h>

int cuDeviceGetAttribute(int *pi, int attrib, int dev);

int cuDeviceGetAttribute(int *pi, int attrib, int dev)
{
	if (!pi || dev != 0)
		return 101; /* CUDA_ERROR_INVALID_DEVICE */
	switch (attrib) {
	case 97: /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
		*pi = 227 * 1024;
		return 0;
	case 111: /* CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK */
		*pi = 1024;
		return 0;
	default:
		return 1; /* CUDA_ERROR_INVALID_VALUE: not simulated */
	}
}
