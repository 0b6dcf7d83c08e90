#include "meshloom/comm/communicator.hpp"

#include <string>

#include "meshloom/error.hpp"

namespace meshloom::comm {

WallStopwatch::WallStopwatch(std::size_t marks) : marks_(marks) {}

void WallStopwatch::mark() {
  if (used_ >= marks_.size()) {
    raise(ErrorKind::ValueError, "Stopwatch::mark: mark " + std::to_string(used_ + 1) + " past the capacity of " +
                                     std::to_string(marks_.size()));
  }
  marks_[used_++] = std::chrono::steady_clock::now();
}

std::vector<double> WallStopwatch::intervals_us() {
  std::vector<double> out;
  for (std::size_t i = 1; i < used_; ++i) {
    out.push_back(std::chrono::duration<double, std::micro>(marks_[i] - marks_[i - 1]).count());
  }
  return out;
}

std::unique_ptr<Stopwatch> Communicator::stopwatch(std::size_t marks) { return std::make_unique<WallStopwatch>(marks); }

double time_single_shot(Communicator& group, Stopwatch& watch, const std::function<void()>& launch) {
  struct Restore {
    Communicator& c;
    ~Restore() { c.set_completion(Completion::Blocking); }
  } restore{group};
  group.set_completion(Completion::Queued);
  watch.reset();
  watch.mark();
  launch();
  watch.mark();
  group.synchronize();
  const std::vector<double> intervals = watch.intervals_us();
  if (intervals.size() != 1) {
    raise(ErrorKind::RuntimeError, "time_single_shot: the stopwatch of '" + group.name() + "' gave " +
                                       std::to_string(intervals.size()) + " intervals for 2 marks");
  }
  return intervals.front();
}

}  // namespace meshloom::comm
