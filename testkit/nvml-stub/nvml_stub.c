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
 * NVML_STUB_INIT_ERROR=<code> makes nvmlInit_v2 answer that code (9: driver not loaded);
 * NVML_STUB_NO_PROCESS_SAMPLES=1 makes process utilisation NOT_SUPPORTED, as older GPUs answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_stub.h"

struct stub_device devices[MAX_GPUS];
struct stub_device mig_devices[MAX_GPUS][2];
static unsigned int gpu_count;
int initialised;

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
const nvmlUtilization_t template_util[4] = {{0, 0}, {100, 23}, {0, 0}, {40, 12}};

static const struct stub_process idle_allocated[] = {{473, 10240 * MIB, 0xFFFFFFFF, 0}};
static const struct stub_process busy_and_idle[] = {
    {4730, 10240 * MIB, 0xFFFFFFFF, -1}, /* holds memory, absent from the samples */
    {5040, 1008 * MIB, 0xFFFFFFFF, 100},
};
static const struct stub_process mig_processes[] = {{6001, 20000 * MIB, 1, -1}, {6002, 20000 * MIB, 2, -1}};

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

nvmlReturn_t copy_string(const char *value, char *out, unsigned int length) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, value, strlen(value) + 1);
    return NVML_SUCCESS;
}


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
    if (env_ll("NVML_STUB_NO_PROCESS_SAMPLES", 0)) return NVML_ERROR_NOT_SUPPORTED; /* older GPUs */
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
