// DeviceBuffer: a typed allocation in CUDA device memory (cudaMalloc / cudaFree), for the NCCL tests and the
// launcher. Move-only. Copies to and from the host are synchronous (cudaMemcpy): fine for setting up and checking
// data, not for code that must keep an MPI progress engine running. No CUDA type appears here.
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

  // Byte copies from the start of the buffer; ValueError when n exceeds bytes().
  void copy_from_host(const void* src, std::size_t n);
  void copy_to_host(void* dst, std::size_t n) const;
  // cudaMemset to zero bytes.
  void fill_zero();

  // Whole-buffer copies of host elements of the same size as the dtype (uint16_t for float16/bfloat16 bit
  // patterns, uint8_t for float8); ValueError on a size or count mismatch.
  template <class T>
  void upload(const std::vector<T>& host) {
    check_host(sizeof(T), host.size());
    copy_from_host(host.data(), bytes());
  }
  template <class T>
  [[nodiscard]] std::vector<T> download() const {
    check_host(sizeof(T), count_);
    std::vector<T> host(count_);
    copy_to_host(host.data(), bytes());
    return host;
  }

private:
  void check_host(std::size_t element_size, std::size_t count) const;
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t count_ = 0;
  DType dtype_ = DType::Float32;
  int device_ = 0;
};

}  // namespace meshloom::nccl
