/* MIG devices, vGPU instances and GPM of the stub NVML library (nvml_stub.c describes the machine). */
#include <stdlib.h>

#include "nvml_stub.h"

static const struct stub_vgpu vgpus[] = {
    {101, "a3b1c2d4-0001-4e5f-8a9b-0c1d2e3f4a5b", "6f1c9f7e-52a4-4b8e-9d3c-2a7b8c9d0e1f"},
    {102, "a3b1c2d4-0002-4e5f-8a9b-0c1d2e3f4a5b", "0b2d4f6a-8c1e-4a3b-9c5d-7e9f1a3b5c7d"},
};
static const double mig_sm_activity[3] = {0.0, 87.5, 0.0}; /* by GPU instance id */

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
