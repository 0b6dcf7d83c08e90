// DeviceBuffer: a typed allocation in CUDA device memory (cudaMalloc / cudaFree), for the NCCL tests and the
// launcher. Move-only. No CUDA type appears here.
//
// Copies to and from the host and clears are complete when they return, in one of two orders:
//   stream == nullptr   cudaMemcpy / cudaMemset on the legacy default stream. It does NOT wait for work queued on a
//                       non-blocking stream (every NcclCommunicator's stream is one): only for data no queued
//                       collective touches.
//   stream = a cudaStream_t (NcclCommunicator::stream())   cudaMemcpyAsync / cudaMemsetAsync on that stream, then a
//                       spin on cudaStreamQuery (never cudaStreamSynchronize, which can starve an MPI progress
//                       engine; never a sleep): ordered after everything queued on the stream, finished on return.
// Freeing (the destructor) is cudaFree, which waits for the device: abort a communicator whose collective timed
// out before freeing its buffers (NcclCommunicator does so itself at the timeout).
#pragma once

#include <cstddef>
#include <vector>

#include "meshloom/comm/communicator.hpp"
#include "meshloom/dtype.hpp"

namespace meshloom::nccl {

// cudaGetDeviceCount, 0 when it fails (no driver: error 35, which leaves its output unwritten).
[[nodiscard]] int cuda_device_count() noexcept;

class DeviceBuffer {
public:
  DeviceBuffer() noexcept = default;
  // count elements of dtype on `device` (cudaSetDevice, then cudaMalloc). RuntimeError when CUDA fails.
  DeviceBuffer(std::size_t count, DType dtype, int device);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] std::size_t bytes() const noexcept;
  [[nodiscard]] int device() const noexcept { return device_; }

  [[nodiscard]] comm::Buffer buffer() const noexcept { return {data_, count_, dtype_}; }
  [[nodiscard]] comm::ConstBuffer const_buffer() const noexcept { return {data_, count_, dtype_}; }

  // Byte copies from the start of the buffer, ordered on `stream` when given (see above); ValueError when n
  // exceeds bytes(), RuntimeError when CUDA fails.
  void copy_from_host(const void* src, std::size_t n, void* stream = nullptr);
  void copy_to_host(void* dst, std::size_t n, void* stream = nullptr) const;
  // Zero bytes, ordered on `stream` when given.
  void fill_zero(void* stream = nullptr);

  // Whole-buffer copies of host elements of the same size as the dtype (uint16_t for float16/bfloat16 bit
  // patterns, uint8_t for float8); ValueError on a size or count mismatch.
  template <class T>
  void upload(const std::vector<T>& host, void* stream = nullptr) {
    check_host(sizeof(T), host.size());
    copy_from_host(host.data(), bytes(), stream);
  }
  template <class T>
  [[nodiscard]] std::vector<T> download(void* stream = nullptr) const {
    check_host(sizeof(T), count_);
    std::vector<T> host(count_);
    copy_to_host(host.data(), bytes(), stream);
    return host;
  }

private:
  // n bytes host -> device (to_device) or device -> host, synchronous or on `stream` (then waited for by spinning).
  static void copy(void* dst, const void* src, std::size_t n, bool to_device, void* stream);
  void check_host(std::size_t element_size, std::size_t count) const;
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t count_ = 0;
  DType dtype_ = DType::Float32;
  int device_ = 0;
};

}  // namespace meshloom::nccl
