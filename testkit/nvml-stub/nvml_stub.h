/* The NVML types, struct layouts and return codes of nvml.h the stub answers with, and the state
 * its two source files share (nvml_stub.c: devices, processes, energy; nvml_stub_instances.c: MIG,
 * vGPU, GPM). See nvml_stub.c for the machine it describes. */
#ifndef ACCELFED_NVML_STUB_H
#define ACCELFED_NVML_STUB_H

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};

typedef struct stub_device *nvmlDevice_t;
typedef unsigned int nvmlVgpuInstance_t;
typedef int nvmlVgpuVmIdType_t; /* NVML_VGPU_VM_ID_DOMAIN_ID = 0, NVML_VGPU_VM_ID_UUID = 1 */

typedef struct { unsigned int gpu; unsigned int memory; } nvmlUtilization_t;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_STRUCT_VERSION(size, ver) ((unsigned int)(size) | ((ver) << 24U))
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct stub_gpm_sample *nvmlGpmSample_t;
typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct { char *shortName, *longName, *unit; } metricInfo;
} nvmlGpmMetric_t;
#define NVML_GPM_METRIC_MAX 210
typedef struct {
    unsigned int version, numMetrics;
    nvmlGpmSample_t sample1, sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
typedef struct { unsigned int version, isSupportedDevice; } nvmlGpmSupport_t;
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1
#define NVML_GPM_METRIC_GRAPHICS_UTIL 1
#define NVML_GPM_METRIC_SM_UTIL 2

struct stub_process { unsigned int pid; unsigned long long memory; unsigned int gi; int sm_util; };
struct stub_vgpu { unsigned int id; const char *uuid; const char *vm_uuid; };
struct stub_device {
    int index, template_index, is_mig, mig_parent;
    unsigned int gpu_instance_id;
    char uuid[96];
    char name[96];
};

#define MAX_GPUS 64
#define MIB (1024ULL * 1024ULL)

extern struct stub_device devices[MAX_GPUS];
extern struct stub_device mig_devices[MAX_GPUS][2];
extern int initialised;
extern const nvmlUtilization_t template_util[4];
nvmlReturn_t copy_string(const char *value, char *out, unsigned int length);

#define CHECK_INIT() do { if (!initialised) return NVML_ERROR_UNINITIALIZED; } while (0)
#define CHECK_DEVICE(d) do { CHECK_INIT(); if (!(d)) return NVML_ERROR_INVALID_ARGUMENT; } while (0)

#endif
