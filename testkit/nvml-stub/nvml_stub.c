/*
 * A stand-in for libnvidia-ml.so.1 for tests on machines without an NVIDIA driver.
 *
 * It exports the NVML entry points accelfed's node agent calls (through nvml-wrapper), with the
 * signatures, struct layouts, version words and return codes of nvml.h, and answers from the
 * readings in shared/reference/gpu-captures/ (an H200 idle but allocated, the same H200 busy with
 * the idle holder still there, an H100 80GB HBM3). What no capture shows (MIG instances in use, a
 * vGPU host) is shaped after nvml.h and marked as made up below.
 *
 * Machine: NVML_STUB_GPUS GPUs (default 4); GPU i answers as template i % 4:
 *   0  H200, idle but allocated: pid 473 holds 10 GiB, its sample smUtil 0; 122.09 W.
 *   1  H200, busy plus an idle holder: pid 4730 holds memory and is absent from the samples,
 *      pid 5040 runs at smUtil 100; 691.87 W.
 *   2  H100 80GB HBM3 in MIG mode, two 3g.40gb instances (GPU instances 1 and 2): pid 6001 on
 *      GI 1 (GPM SM activity 87.5 %), pid 6002 on GI 2 (0 %); made up; 180 W.
 *   3  H100 80GB HBM3 as a vGPU host with two active vGPUs, VMs given by UUID; made up; 250 W.
 * The energy counter (mJ) is base + power * (now - NVML_STUB_EPOCH_MS), so it rises across
 * restarts of the reader exactly as a GPU's counter does between driver loads.
 * NVML_STUB_INIT_ERROR=<code> makes nvmlInit_v2 answer that code (9: driver not loaded).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
static struct stub_device devices[MAX_GPUS];
static struct stub_device mig_devices[MAX_GPUS][2];
static unsigned int gpu_count;
static int initialised;

static const char *const template_uuids[4] = {
    "GPU-f056ed22-e9af-22b3-c6b1-ca31bc2d9cc7", /* the H200 of the captures */
    "GPU-f056ed22-e9af-22b3-c6b1-ca31bc2d9c01", /* the same readings as another H200 */
    "GPU-a824b919-34d1-dc6b-8ef9-f78132547b23", /* the H100 of the captures */
    "GPU-a079082a-f22a-79c0-5dd1-1d0d1c202a9c", /* the H100 of query-gpu.csv */
};
static const char *const template_names[4] = {
    "NVIDIA H200", "NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3",
};
static const unsigned long long template_total[4] = {
    150754820096ULL, 150754820096ULL, 81559ULL * MIB, 81559ULL * MIB,
};
static const unsigned long long template_used[4] = {
    11386290176ULL, 12442796032ULL, 2 * 20000ULL * MIB, 2 * 40448ULL * MIB,
};
static const unsigned int template_power_mw[4] = {122090, 691870, 180000, 250000};
static const unsigned long long template_energy_base_mj[4] = {5016958, 17022012, 1000000, 2000000};
static const nvmlUtilization_t template_util[4] = {{0, 0}, {100, 23}, {0, 0}, {40, 12}};

static const struct stub_process idle_allocated[] = {{473, 10240 * MIB, 0xFFFFFFFF, 0}};
static const struct stub_process busy_and_idle[] = {
    {4730, 10240 * MIB, 0xFFFFFFFF, -1}, /* holds memory, absent from the samples */
    {5040, 1008 * MIB, 0xFFFFFFFF, 100},
};
static const struct stub_process mig_processes[] = {{6001, 20000 * MIB, 1, -1}, {6002, 20000 * MIB, 2, -1}};
static const double mig_sm_activity[3] = {0.0, 87.5, 0.0}; /* by GPU instance id */
static const struct stub_vgpu vgpus[] = {
    {101, "a3b1c2d4-0001-4e5f-8a9b-0c1d2e3f4a5b", "6f1c9f7e-52a4-4b8e-9d3c-2a7b8c9d0e1f"},
    {102, "a3b1c2d4-0002-4e5f-8a9b-0c1d2e3f4a5b", "0b2d4f6a-8c1e-4a3b-9c5d-7e9f1a3b5c7d"},
};

static const struct stub_process *processes_of(const struct stub_device *d, unsigned int *count) {
    switch (d->template_index) {
    case 0: *count = 1; return idle_allocated;
    case 1: *count = 2; return busy_and_idle;
    case 2: *count = 2; return mig_processes;
    default: *count = 0; return NULL;
    }
}

static long long env_ll(const char *name, long long fallback) {
    const char *text = getenv(name);
    return text && *text ? atoll(text) : fallback;
}

static unsigned long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}

static nvmlReturn_t copy_string(const char *value, char *out, unsigned int length) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, value, strlen(value) + 1);
    return NVML_SUCCESS;
}

#define CHECK_INIT() do { if (!initialised) return NVML_ERROR_UNINITIALIZED; } while (0)
#define CHECK_DEVICE(d) do { CHECK_INIT(); if (!(d)) return NVML_ERROR_INVALID_ARGUMENT; } while (0)

nvmlReturn_t nvmlInit_v2(void) {
    long long forced = env_ll("NVML_STUB_INIT_ERROR", 0);
    if (forced) return (nvmlReturn_t)forced;
    gpu_count = (unsigned int)env_ll("NVML_STUB_GPUS", 4);
    if (gpu_count > MAX_GPUS) gpu_count = MAX_GPUS;
    for (unsigned int i = 0; i < gpu_count; i++) {
        struct stub_device *d = &devices[i];
        memset(d, 0, sizeof *d);
        d->index = (int)i;
        d->template_index = (int)(i % 4);
        snprintf(d->uuid, sizeof d->uuid, "%s", template_uuids[i % 4]);
        if (i >= 4) snprintf(d->uuid + strlen(d->uuid) - 2, 3, "%02x", i & 0xffu); /* one UUID per GPU */
        snprintf(d->name, sizeof d->name, "%s", template_names[i % 4]);
        if (d->template_index == 2) {
            for (unsigned int m = 0; m < 2; m++) {
                struct stub_device *mig = &mig_devices[i][m];
                memset(mig, 0, sizeof *mig);
                *mig = *d;
                mig->is_mig = 1;
                mig->mig_parent = (int)i;
                mig->gpu_instance_id = m + 1;
                snprintf(mig->uuid, sizeof mig->uuid, "MIG-%02x%06x-5d1e-5c8a-9f3b-4e2d1c0b9a8%u", i, 0xa8u, m);
                snprintf(mig->name, sizeof mig->name, "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
            }
        }
    }
    initialised = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) { CHECK_INIT(); initialised = 0; return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case 9: return "Driver Not Loaded";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    CHECK_INIT();
    return copy_string("580.159.04", version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
    CHECK_INIT();
    return copy_string("13.580.159.04", version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    CHECK_INIT();
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = gpu_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    CHECK_INIT();
    if (!device || index >= gpu_count) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    CHECK_DEVICE(device);
    return copy_string(device->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    CHECK_DEVICE(device);
    return copy_string(device->name, name, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
    CHECK_DEVICE(device);
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2))
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (device->is_mig) {
        memory->total = 40448ULL * MIB;
        memory->reserved = 0;
        memory->used = 20000ULL * MIB;
    } else {
        memory->total = template_total[device->template_index];
        memory->reserved = 644939776ULL; /* as the H200 reported in every phase */
        memory->used = template_used[device->template_index];
    }
    memory->free = memory->total - memory->reserved - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization) {
    CHECK_DEVICE(device);
    if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->is_mig || device->template_index == 2) return NVML_ERROR_NOT_SUPPORTED; /* MIG on */
    *utilization = template_util[device->template_index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power) {
    CHECK_DEVICE(device);
    if (!power) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->is_mig) return NVML_ERROR_NOT_SUPPORTED;
    *power = template_power_mw[device->template_index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy) {
    CHECK_DEVICE(device);
    if (!energy) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->is_mig) return NVML_ERROR_NOT_SUPPORTED;
    long long epoch_ms = env_ll("NVML_STUB_EPOCH_MS", 1795754225262LL);
    long long elapsed_ms = (long long)(now_us() / 1000ULL) - epoch_ms;
    if (elapsed_ms < 0) elapsed_ms = 0;
    *energy = template_energy_base_mj[device->template_index] +
              (unsigned long long)elapsed_ms * template_power_mw[device->template_index] / 1000ULL;
    return NVML_SUCCESS;
}

/* nvmlDeviceGetComputeRunningProcesses_v3: a NULL buffer asks for the count (INSUFFICIENT_SIZE
 * when there are processes); a MIG device handle lists the processes of its GPU instance. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos) {
    CHECK_DEVICE(device);
    if (!infoCount) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned int total = 0, wanted = 0;
    const struct stub_process *all = processes_of(device->is_mig ? &devices[device->mig_parent] : device, &total);
    for (unsigned int i = 0; i < total; i++)
        if (!device->is_mig || all[i].gi == device->gpu_instance_id) wanted++;
    if (wanted == 0) { *infoCount = 0; return NVML_SUCCESS; }
    if (!infos || *infoCount < wanted) { *infoCount = wanted; return NVML_ERROR_INSUFFICIENT_SIZE; }
    unsigned int n = 0;
    for (unsigned int i = 0; i < total; i++) {
        if (device->is_mig && all[i].gi != device->gpu_instance_id) continue;
        infos[n].pid = all[i].pid;
        infos[n].usedGpuMemory = all[i].memory;
        infos[n].gpuInstanceId = all[i].gi;
        infos[n].computeInstanceId = all[i].gi == 0xFFFFFFFF ? 0xFFFFFFFF : 0;
        n++;
    }
    *infoCount = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos) {
    (void)infos;
    CHECK_DEVICE(device);
    if (!infoCount) return NVML_ERROR_INVALID_ARGUMENT;
    *infoCount = 0;
    return NVML_SUCCESS;
}

/* Only processes that ran kernels in the window have a sample: NOT_FOUND when none did (as the
 * H200 answered with no process), an idle holder beside a busy process is simply absent. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp) {
    CHECK_DEVICE(device);
    if (!processSamplesCount) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->is_mig || device->template_index == 2) return NVML_ERROR_NOT_SUPPORTED;
    unsigned int total = 0, wanted = 0;
    const struct stub_process *all = processes_of(device, &total);
    for (unsigned int i = 0; i < total; i++) if (all[i].sm_util >= 0) wanted++;
    unsigned long long stamp = now_us();
    if (wanted == 0 || stamp <= lastSeenTimeStamp) return NVML_ERROR_NOT_FOUND;
    if (!utilization || *processSamplesCount < wanted) {
        *processSamplesCount = wanted;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned int n = 0;
    for (unsigned int i = 0; i < total; i++) {
        if (all[i].sm_util < 0) continue;
        memset(&utilization[n], 0, sizeof utilization[n]);
        utilization[n].pid = all[i].pid;
        utilization[n].timeStamp = stamp;
        utilization[n].smUtil = (unsigned int)all[i].sm_util;
        utilization[n].memUtil = all[i].sm_util > 0 ? 22 : 0;
        n++;
    }
    *processSamplesCount = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode) {
    CHECK_DEVICE(device);
    if (!currentMode || !pendingMode) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->is_mig) return NVML_ERROR_NOT_SUPPORTED;
    *currentMode = *pendingMode = device->template_index == 2 ? 1 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice) {
    CHECK_DEVICE(device);
    if (!isMigDevice) return NVML_ERROR_INVALID_ARGUMENT;
    *isMigDevice = (unsigned int)device->is_mig;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count) {
    CHECK_DEVICE(device);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->is_mig) return NVML_ERROR_NOT_SUPPORTED;
    *count = device->template_index == 2 ? 7 : 0; /* seven 1g slices on an H100 */
    return NVML_SUCCESS;
}

/* Of the seven possible MIG device slots, the first two hold instances; the rest are NOT_FOUND. */
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice) {
    CHECK_DEVICE(device);
    if (!migDevice) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->is_mig || device->template_index != 2) return NVML_ERROR_NOT_SUPPORTED;
    if (index >= 7) return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= 2) return NVML_ERROR_NOT_FOUND;
    *migDevice = &mig_devices[device->index][index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetActiveVgpus(nvmlDevice_t device, unsigned int *vgpuCount, nvmlVgpuInstance_t *vgpuInstances) {
    CHECK_DEVICE(device);
    if (!vgpuCount) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->template_index != 3) return NVML_ERROR_NOT_SUPPORTED; /* bare metal, as the H200 */
    unsigned int wanted = 2;
    if (!vgpuInstances || *vgpuCount < wanted) { *vgpuCount = wanted; return NVML_ERROR_INSUFFICIENT_SIZE; }
    for (unsigned int i = 0; i < wanted; i++) vgpuInstances[i] = vgpus[i].id + 1000 * (unsigned int)device->index;
    *vgpuCount = wanted;
    return NVML_SUCCESS;
}

static const struct stub_vgpu *vgpu_of(nvmlVgpuInstance_t instance) {
    for (unsigned int i = 0; i < 2; i++) if (vgpus[i].id == instance % 1000) return &vgpus[i];
    return NULL;
}

nvmlReturn_t nvmlVgpuInstanceGetVmID(nvmlVgpuInstance_t vgpuInstance, char *vmId, unsigned int size,
                                     nvmlVgpuVmIdType_t *vmIdType) {
    CHECK_INIT();
    const struct stub_vgpu *vgpu = vgpu_of(vgpuInstance);
    if (!vgpu || !vmIdType) return vgpu ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_FOUND;
    *vmIdType = 1; /* NVML_VGPU_VM_ID_UUID: KVM hypervisors name the VM by its libvirt UUID */
    return copy_string(vgpu->vm_uuid, vmId, size);
}

nvmlReturn_t nvmlVgpuInstanceGetUUID(nvmlVgpuInstance_t vgpuInstance, char *uuid, unsigned int size) {
    CHECK_INIT();
    const struct stub_vgpu *vgpu = vgpu_of(vgpuInstance);
    if (!vgpu) return NVML_ERROR_NOT_FOUND;
    return copy_string(vgpu->uuid, uuid, size);
}

/* GPM (Hopper and newer): samples of a GPU or of one of its GPU instances, metrics between two. */
struct stub_gpm_sample { const struct stub_device *device; unsigned int gpu_instance_id; int filled; };

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport) {
    CHECK_DEVICE(device);
    if (!gpmSupport) return NVML_ERROR_INVALID_ARGUMENT;
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    gpmSupport->isSupportedDevice = 1; /* both the H100 and the H200 answered 1 */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample) {
    CHECK_INIT();
    if (!gpmSample) return NVML_ERROR_INVALID_ARGUMENT;
    *gpmSample = calloc(1, sizeof(struct stub_gpm_sample));
    return *gpmSample ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
    CHECK_INIT();
    free(gpmSample);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
    CHECK_DEVICE(device);
    if (!gpmSample) return NVML_ERROR_INVALID_ARGUMENT;
    gpmSample->device = device;
    gpmSample->gpu_instance_id = 0xFFFFFFFF;
    gpmSample->filled = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample) {
    CHECK_DEVICE(device);
    if (!gpmSample) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->template_index != 2 || gpuInstanceId < 1 || gpuInstanceId > 2) return NVML_ERROR_NOT_FOUND;
    gpmSample->device = device;
    gpmSample->gpu_instance_id = gpuInstanceId;
    gpmSample->filled = 1;
    return NVML_SUCCESS;
}

static char sm_short[] = "SM_UTIL", sm_long[] = "SM utilization", percent[] = "%";
static char gr_short[] = "GRAPHICS_UTIL", gr_long[] = "Graphics utilization";

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet) {
    CHECK_INIT();
    if (!metricsGet) return NVML_ERROR_INVALID_ARGUMENT;
    if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlGpmSample_t first = metricsGet->sample1, second = metricsGet->sample2;
    if (!first || !second || !first->filled || !second->filled || first->device != second->device ||
        first->gpu_instance_id != second->gpu_instance_id || metricsGet->numMetrics > NVML_GPM_METRIC_MAX)
        return NVML_ERROR_INVALID_ARGUMENT;
    double activity;
    if (second->gpu_instance_id <= 2) activity = mig_sm_activity[second->gpu_instance_id];
    else activity = (double)template_util[second->device->template_index].gpu;
    for (unsigned int i = 0; i < metricsGet->numMetrics; i++) {
        nvmlGpmMetric_t *metric = &metricsGet->metrics[i];
        metric->metricInfo.unit = percent;
        if (metric->metricId == NVML_GPM_METRIC_SM_UTIL) {
            metric->nvmlReturn = NVML_SUCCESS;
            metric->value = activity;
            metric->metricInfo.shortName = sm_short;
            metric->metricInfo.longName = sm_long;
        } else if (metric->metricId == NVML_GPM_METRIC_GRAPHICS_UTIL) {
            metric->nvmlReturn = NVML_SUCCESS;
            metric->value = activity;
            metric->metricInfo.shortName = gr_short;
            metric->metricInfo.longName = gr_long;
        } else {
            metric->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
    }
    return NVML_SUCCESS;
}
