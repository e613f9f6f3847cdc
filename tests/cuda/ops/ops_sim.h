/*
 * ops_sim.h — the known truth of the simulated PyTorch training loop
 * (ops_train.cc over libtorch_sim.so, libcublas_sim.so, libcudnn_sim.so on
 * the simulated CUPTI), which tests/e2e/cuda_ops.sh reads back from this
 * file: every OPS_* number below is what the report must show.  Per step:
 *   train_step:  copy_ (one HtoD copy)
 *                2 x linear -> addmm -> cuBLAS: one fp32 sgemm each
 *                conv2d -> convolution -> _convolution -> cudnn_convolution
 *                   -> cuDNN: nchwToNhwc, the convolution, nhwcToNchw
 *                relu_ (one elementwise kernel)
 *                60 x add_ (one tiny elementwise kernel each)
 *   the autograd engine's thread (pt_autograd_0), started by the library:
 *                2 x AddmmBackward0 -> mm -> cuBLAS: 2 sgemm each
 *                ConvolutionBackward0 -> convolution_backward -> cuDNN:
 *                   nchwToNhwc, dgrad (a mangled name cut short), nhwcToNchw
 *                3 x AccumulateGrad -> add_ (one tiny elementwise kernel each)
 * linear burns OPS_LINEAR_BURN_MS of CPU in its own code, addmm
 * OPS_ADDMM_BURN_MS: addmm's self CPU is 3x linear's.
 */
#ifndef CBN_OPS_SIM_H
#define CBN_OPS_SIM_H

#define OPS_STEPS 4
#define OPS_LINEAR_PER_STEP 2
#define OPS_ADDS_PER_STEP 60
#define OPS_BW_ADDMM_PER_STEP 2
#define OPS_ACCUMULATE_PER_STEP 3

#define OPS_SGEMM_NS 300000
#define OPS_CONV_NS 400000
#define OPS_DGRAD_NS 450000
#define OPS_XPOSE_NS 100000
#define OPS_RELU_NS 20000
#define OPS_ADD_NS 5000
#define OPS_COPY_NS 50000
#define OPS_COPY_BYTES 1048576

#define OPS_LINEAR_BURN_MS 10
#define OPS_ADDMM_BURN_MS 30

/* kernel names as the libraries launch them (mangled where nvcc mangles) */
#define OPS_SGEMM "ampere_sgemm_128x64_nn"
#define OPS_CONV "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x128x16"
#define OPS_DGRAD "_ZN17cutlass__5x_cudnn6KernelINS_4gemm6kernel13GemmUniversalINS1_10threadblock"
#define OPS_NCHW2NHWC \
	"_ZN5cudnn3ops16nchwToNhwcKernelIfffLb0ELb1EL21cudnnKernelDataType_t2EEEvNS0_18nchw2nhwc_params_tIT_EEPKS5_PS5_"
#define OPS_NHWC2NCHW \
	"_ZN5cudnn3ops16nhwcToNchwKernelIfffLb1ELb0EL21cudnnKernelDataType_t0EEEvNS0_18nhwc2nchw_params_tIT_EEPKS5_PS5_"
#define OPS_RELU \
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11ReluFunctorIfEENS_6detail5ArrayIPcLi2EEEEEviT0_T1_"
#define OPS_ADD \
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_"

#ifdef __cplusplus
extern "C" {
#endif
/* libcublas_sim.so */
void cublasSgemm_sim(unsigned stream);
/* libcudnn_sim.so */
void cudnnConvolutionForward_sim(unsigned stream);
void cudnnConvolutionBackwardData_sim(unsigned stream);
#ifdef __cplusplus
}
#endif

#endif
