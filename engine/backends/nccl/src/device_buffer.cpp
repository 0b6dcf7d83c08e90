#include "meshloom/backends/device_buffer.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <thread>
#include <utility>

#include "cuda_error.hpp"
#include "meshloom/error.hpp"

namespace meshloom::nccl {

using detail::check_cuda;

namespace {

// Waits for `stream` by spinning on cudaStreamQuery (yielding the core between polls; no sleep, no
// cudaStreamSynchronize).
void spin_until_done(cudaStream_t stream, const char* call) {
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) check_cuda(status, std::string("cudaStreamQuery after ") + call);
    std::this_thread::yield();
  }
}

}  // namespace

int cuda_device_count() noexcept {
  int count = 0;  // left unwritten when the call fails
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

DeviceBuffer::DeviceBuffer(std::size_t count, DType dtype, int device) : count_(count), dtype_(dtype), device_(device) {
  if (device < 0) raise(ErrorKind::ValueError, "DeviceBuffer: device must be >= 0, got " + std::to_string(device));
  check_cuda(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
  if (count == 0) return;
  check_cuda(cudaMalloc(&data_, bytes()), "cudaMalloc(" + std::to_string(bytes()) + " bytes)",
             "device " + std::to_string(device));
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      count_(std::exchange(other.count_, 0)),
      dtype_(other.dtype_),
      device_(other.device_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    count_ = std::exchange(other.count_, 0);
    dtype_ = other.dtype_;
    device_ = other.device_;
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (data_ == nullptr) return;
  // cudaFree synchronizes the device; its error (a dead context during teardown) cannot be reported here.
  if (cudaFree(data_) != cudaSuccess) (void)cudaGetLastError();
  data_ = nullptr;
  count_ = 0;
}

std::size_t DeviceBuffer::bytes() const noexcept { return count_ * static_cast<std::size_t>(itemsize(dtype_)); }

void DeviceBuffer::copy_from_host(const void* src, std::size_t n, void* stream) {
  if (n > bytes()) {
    raise(ErrorKind::ValueError, "DeviceBuffer::copy_from_host: " + std::to_string(n) + " bytes into a buffer of " +
                                     std::to_string(bytes()));
  }
  copy(data_, src, n, true, stream);
}

void DeviceBuffer::copy_to_host(void* dst, std::size_t n, void* stream) const {
  if (n > bytes()) {
    raise(ErrorKind::ValueError, "DeviceBuffer::copy_to_host: " + std::to_string(n) + " bytes from a buffer of " +
                                     std::to_string(bytes()));
  }
  copy(dst, data_, n, false, stream);
}

void DeviceBuffer::copy(void* dst, const void* src, std::size_t n, bool to_device, void* stream) {
  if (n == 0) return;
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  const char* direction = to_device ? "(host to device)" : "(device to host)";
  if (stream == nullptr) {
    check_cuda(cudaMemcpy(dst, src, n, kind), std::string("cudaMemcpy") + direction);
    return;
  }
  auto* s = static_cast<cudaStream_t>(stream);
  const std::string call = std::string("cudaMemcpyAsync") + direction;
  check_cuda(cudaMemcpyAsync(dst, src, n, kind, s), call);
  spin_until_done(s, call.c_str());
}

void DeviceBuffer::fill_zero(void* stream) {
  if (data_ == nullptr) return;
  if (stream == nullptr) {
    check_cuda(cudaMemset(data_, 0, bytes()), "cudaMemset");
    spin_until_done(nullptr, "cudaMemset");  // cudaMemset may return before it has run
    return;
  }
  auto* s = static_cast<cudaStream_t>(stream);
  check_cuda(cudaMemsetAsync(data_, 0, bytes(), s), "cudaMemsetAsync");
  spin_until_done(s, "cudaMemsetAsync");
}

void DeviceBuffer::check_host(std::size_t element_size, std::size_t count) const {
  if (element_size != static_cast<std::size_t>(itemsize(dtype_))) {
    raise(ErrorKind::ValueError, "DeviceBuffer: host elements of " + std::to_string(element_size) +
                                     " bytes for dtype " + std::string(to_string(dtype_)));
  }
  if (count != count_) {
    raise(ErrorKind::ValueError, "DeviceBuffer: " + std::to_string(count) + " host elements for a buffer of " +
                                     std::to_string(count_));
  }
}

}  // namespace meshloom::nccl
