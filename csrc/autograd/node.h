// Backward nodes written as ATen's generated ones are (a
// torch::autograd::Node with plain members), for every op's Autograd
// kernel: unlike a C++ torch::autograd::Function, such a node works under
// torch.func's transforms (grad, vjp, vmap of grad), and costs no context
// map of IValues.
#pragma once

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <memory>
#include <type_traits>
#include <utility>

namespace gpureduce {

// torch's autograd graph holds nodes by std::shared_ptr up to 2.12 and by
// c10::intrusive_ptr from 2.13 on; this builds one either way.
using NodePtr = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<torch::autograd::Edge>().function)>>;

template <class T>
NodePtr make_node() {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<torch::autograd::Node>>) {
    return std::shared_ptr<T>(new T());
  } else {
    return c10::make_intrusive<T>();
  }
}

}  // namespace gpureduce
