// reduce_op._fast: the operator's overloads called from Python through typed
// handles of the registered operator (looked up once), with their arguments
// parsed by hand here. torch.ops' generic path boxes every argument and
// looks the overload up per call, which cost 1.4-2.7 us more than torch.sum
// on a 10-element CPU tensor; pybind11's bindings of the same handles still
// 0.3 us more for a dim list (benchmarks/NOTES.md). The call still goes
// through the dispatcher, so autograd, the profiler, torch_dispatch modes
// and every registered key apply as before. reduce_op.sum and the drop-in
// take this path only where torch.ops would add nothing: no torch.compile
// tracing and no __torch_function__ override or mode.
//
// A module of its own, apart from _C, so that _C (which LibTorch programs
// load) needs no Python.
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <atomic>
#include <optional>

namespace {

using SumAll = at::Tensor(const at::Tensor&, std::optional<at::ScalarType>);
using SumDims = at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>);
using DimList = c10::SmallVector<int64_t, 6>;

c10::TypedOperatorHandle<SumAll>& sum_all_op() {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("gpureduce::sum", "").typed<SumAll>();
  return op;
}

c10::TypedOperatorHandle<SumDims>& sum_dims_op() {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("gpureduce::sum", "dim_IntList").typed<SumDims>();
  return op;
}

// The GIL released for the operator's call on inputs of kReleaseGilElements
// or more, as torch's own bindings release it, so that other Python threads
// run during a long sum (kernels that call back into Python, such as a
// torch_dispatch mode, take it again). On smaller inputs, releasing and
// taking it back cost 0.15-0.2 us of a 2 us call (CPU, one thread) and
// would free the GIL for a microsecond.
constexpr int64_t kReleaseGilElements = int64_t(1) << 16;

class GilReleased {
 public:
  explicit GilReleased(bool release) : state_(release ? PyEval_SaveThread() : nullptr) {}
  ~GilReleased() {
    if (state_ != nullptr) PyEval_RestoreThread(state_);
  }
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  PyThreadState* state_;
};

at::Tensor call_sum(const at::Tensor& x, const std::optional<DimList>& dims, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  GilReleased no_gil(x.numel() >= kReleaseGilElements);
  if (!dims.has_value() && !keepdim) return sum_all_op().call(x, dtype);
  const at::OptionalIntArrayRef dim_ref =
      dims.has_value() ? at::OptionalIntArrayRef(at::IntArrayRef(*dims)) : at::OptionalIntArrayRef(std::nullopt);
  return sum_dims_op().call(x, dim_ref, keepdim, dtype);
}

// How an argument parsed: as a form taken here, as another form (the
// caller's Python path decides), or with a Python error set.
enum class Parsed { kTaken, kOther, kError };

// A plain Python int (not a bool, which is an int subclass). One outside
// int64 sets ValueError (sum_dims raises it; sum and dropin_sum leave such
// dims to torch, which raises ValueError for one alone and TypeError for
// one in a list).
Parsed plain_int(PyObject* o, int64_t* v) {
  if (!PyLong_CheckExact(o)) return Parsed::kOther;
  int overflow = 0;
  *v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0) {
    PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
    return Parsed::kError;
  }
  return Parsed::kTaken;
}

// dim: None (or absent), an int, or a tuple or list of ints.
Parsed parse_dims(PyObject* o, std::optional<DimList>* dims) {
  if (o == nullptr || o == Py_None) return Parsed::kTaken;
  int64_t v;
  if (PyLong_CheckExact(o)) {
    const Parsed p = plain_int(o, &v);
    if (p == Parsed::kTaken) dims->emplace(1, v);
    return p;
  }
  if (!PyTuple_CheckExact(o) && !PyList_CheckExact(o)) return Parsed::kOther;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  dims->emplace();
  for (Py_ssize_t i = 0; i < n; ++i) {
    const Parsed p = plain_int(items[i], &v);
    if (p != Parsed::kTaken) return p;
    (*dims)->push_back(v);
  }
  return Parsed::kTaken;
}

// dtype: None or a torch dtype.
Parsed parse_dtype(PyObject* o, std::optional<at::ScalarType>* dtype) {
  if (o == Py_None) return Parsed::kTaken;
  if (!THPDtype_Check(o)) return Parsed::kOther;
  *dtype = reinterpret_cast<THPDtype*>(o)->scalar_type;
  return Parsed::kTaken;
}

// sum_all(input, dtype) and sum_dims(input, dims, keepdim, dtype), for
// reduce_op.sum's common forms, which it has checked: a tensor, dims None or
// a list or tuple of ints, a bool keepdim, a torch dtype or None.
PyObject* sum_all(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  std::optional<at::ScalarType> dtype;
  if (argc != 2 || !THPVariable_Check(argv[0]) || parse_dtype(argv[1], &dtype) != Parsed::kTaken) {
    PyErr_SetString(PyExc_TypeError, "sum_all(input: Tensor, dtype: Optional[dtype])");
    return nullptr;
  }
  return THPVariable_Wrap(call_sum(THPVariable_Unpack(argv[0]), std::nullopt, false, dtype));
  END_HANDLE_TH_ERRORS
}

PyObject* sum_dims(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  std::optional<DimList> dims;
  std::optional<at::ScalarType> dtype;
  const Parsed p = argc == 4 ? parse_dims(argv[1], &dims) : Parsed::kOther;
  if (p == Parsed::kError) return nullptr;
  if (p != Parsed::kTaken || !THPVariable_Check(argv[0]) || !PyBool_Check(argv[2]) ||
      parse_dtype(argv[3], &dtype) != Parsed::kTaken) {
    PyErr_SetString(PyExc_TypeError,
                    "sum_dims(input: Tensor, dims: Optional[Sequence[int]], keepdim: bool, dtype: Optional[dtype])");
    return nullptr;
  }
  return THPVariable_Wrap(call_sum(THPVariable_Unpack(argv[0]), dims, argv[2] == Py_True, dtype));
  END_HANDLE_TH_ERRORS
}

// ---- reduce_op.sum itself ----
//
// reduce_op.sum is this function: the forms most calls use (a tensor
// without a __torch_function__ override or mode, not nested; no dim, an
// int, or a tuple or list of ints; a bool keepdim; a torch dtype or none;
// no out= or kernel=) are parsed here and the operator called through its
// typed handle. Every other call goes, with its arguments as given, to
// reduce_op._sum, the Python function that takes all of sum's forms and
// that torch.compile traces in this one's place (reduce_op/__init__.py).
// As a Python function checking those forms before this module's typed
// calls, reduce_op.sum cost 1.52 us on 8 float32 elements where torch.sum
// cost 1.44 and the typed call alone 1.01 (CPU, 2 threads; NOTES.md,
// session 19).

PyObject* g_sum_general = nullptr;         // reduce_op._sum
PyObject* g_has_torch_function = nullptr;  // torch._C._has_torch_function_unary

bool key_is(PyObject* key, const char* name) { return PyUnicode_CompareWithASCIIString(key, name) == 0; }

// The slot of a keyword argument of sum: 0 input, 1 dim, 2 keepdim, 3
// dtype, 4 out, 5 kernel, and numpy's names 6 axis, 7 keepdims; -1 for
// any other name.
constexpr int kSumSlots = 8;
int sum_keyword_slot(PyObject* key) {
  static const char* const kNames[kSumSlots] = {"input", "dim", "keepdim", "dtype", "out", "kernel", "axis", "keepdims"};
  if (!PyUnicode_Check(key)) return -1;
  for (int i = 0; i < kSumSlots; ++i) {
    if (key_is(key, kNames[i])) return i;
  }
  return -1;
}

PyObject* sum(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  TORCH_CHECK(g_sum_general != nullptr, "reduce_op._fast.sum: reduce_op has not set its Python sum");
  PyObject* arg[kSumSlots] = {};
  bool take = nargs <= 3;
  for (Py_ssize_t i = 0; take && i < nargs; ++i) arg[i] = argv[i];
  const Py_ssize_t n_kw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; take && k < n_kw; ++k) {
    const int slot = sum_keyword_slot(PyTuple_GET_ITEM(kwnames, k));
    if (slot < 0 || arg[slot] != nullptr) {
      take = false;  // unknown or given twice: the Python function raises as Python does
    } else {
      arg[slot] = argv[nargs + k];
    }
  }
  // numpy's names, as torch.sum takes them: not beside the name they stand
  // for (given at all, None and False included), and keepdims only with a
  // dim. Whether a name was given is known here only; reduce_op._sum maps
  // them.
  if (take && (arg[6] != nullptr || arg[7] != nullptr)) {
    const bool axis_twice = arg[6] != nullptr && arg[1] != nullptr;
    const bool keepdims_alone = arg[7] != nullptr && (arg[2] != nullptr || (arg[1] == nullptr && arg[6] == nullptr));
    if (axis_twice || keepdims_alone) {
      PyErr_Format(PyExc_TypeError, "sum() got an unexpected keyword argument '%s'", axis_twice ? "axis" : "keepdims");
      return nullptr;
    }
    take = false;
  }
  auto absent = [](PyObject* o) { return o == nullptr || o == Py_None; };
  std::optional<at::ScalarType> dtype;
  std::optional<DimList> dims;
  take = take && arg[0] != nullptr && THPVariable_Check(arg[0]) && absent(arg[4]) && absent(arg[5]) &&
         (arg[2] == nullptr || arg[2] == Py_True || arg[2] == Py_False) &&
         parse_dtype(arg[3] == nullptr ? Py_None : arg[3], &dtype) == Parsed::kTaken;
  if (take) {
    const Parsed p = parse_dims(arg[1], &dims);
    if (p == Parsed::kError) PyErr_Clear();  // torch.sum raises its own error for it (reduce_op._sum)
    take = p == Parsed::kTaken;
  }
  if (take) {
    PyObject* has = PyObject_CallOneArg(g_has_torch_function, arg[0]);
    if (has == nullptr) return nullptr;
    take = has == Py_False;
    Py_DECREF(has);
  }
  if (take) {
    const at::Tensor& x = THPVariable_Unpack(arg[0]);
    if (!x.is_nested()) return THPVariable_Wrap(call_sum(x, dims, arg[2] == Py_True, dtype));
  }
  return PyObject_Vectorcall(g_sum_general, argv, nargs, kwnames);
  END_HANDLE_TH_ERRORS
}

// set_sum_general(sum_general, has_torch_function): what sum calls for the
// forms it does not take, and the test of __torch_function__ it uses.
PyObject* set_sum_general(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  if (argc != 2 || !PyCallable_Check(argv[0]) || !PyCallable_Check(argv[1])) {
    PyErr_SetString(PyExc_TypeError, "set_sum_general(sum_general, has_torch_function)");
    return nullptr;
  }
  Py_INCREF(argv[0]);
  Py_INCREF(argv[1]);
  Py_XSETREF(g_sum_general, argv[0]);
  Py_XSETREF(g_has_torch_function, argv[1]);
  Py_RETURN_NONE;
}

// ---- The drop-in's call path (reduce_op/_dropin.py) ----
//
// torch.sum and Tensor.sum, while routed, call a Python wrapper that first
// tries dropin_sum below: the forms models use (a plain tensor; no dim, an
// int, or a tuple or list of ints; a bool keepdim; a torch dtype or none),
// parsed here and the operator called through its typed handle. Anything
// else returns None, and the wrapper hands the call to torch's function
// under the drop-in's TorchFunctionMode. Binding those forms in Python cost
// 0.8 us a call and the mode's own dispatch 1.7 us (CPU, 10 elements,
// torch.sum 2.1 us; NOTES.md, session 16).

std::atomic<bool> g_patched{false};  // reduce_op.patch() in force
thread_local int t_blocks = 0;       // replace_torch_sum() blocks open on this thread

// Whether this path may take a call. A block pushes its own
// TorchFunctionMode: that must be the only mode on the stack, for any other
// one has to see the call first, through torch's own function. Without a
// block (patch() alone) no mode may be active. Nested blocks, or torch
// function disabled, take torch's function (and so the mode).
bool dropin_may_take_call() {
  if (t_blocks > 1 || (t_blocks == 0 && !g_patched.load(std::memory_order_relaxed))) return false;
  if (at::impl::PythonTorchFunctionTLS::get_disabled_state() != at::impl::TorchFunctionDisabledState::ENABLED)
    return false;
  return at::impl::PythonTorchFunctionTLS::stack_len() == t_blocks;
}

bool has_cuda_kernel() {
  static const bool has =
      c10::Dispatcher::singleton().findSchemaOrThrow("gpureduce::sum", "").hasKernelForDispatchKey(c10::DispatchKey::CUDA);
  return has;
}

// A tensor the operator has kernels for: dense, not quantized or nested, on
// the CPU, meta, or CUDA where this build has CUDA kernels.
bool operator_takes(const at::Tensor& x) {
  if (x.layout() != at::kStrided || x.is_quantized() || x.is_nested()) return false;
  const auto dev = x.device().type();
  return dev == c10::DeviceType::CPU || dev == c10::DeviceType::Meta ||
         (dev == c10::DeviceType::CUDA && has_cuda_kernel());
}

// dropin_sum(args, kwargs): the result, or None where the call is not one
// of the forms above.
PyObject* dropin_sum(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  if (argc != 2 || !PyTuple_CheckExact(argv[0]) || !dropin_may_take_call()) Py_RETURN_NONE;
  PyObject* args = argv[0];
  PyObject* kwargs = argv[1];
  const Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n < 1 || n > 3 || !THPVariable_CheckExact(PyTuple_GET_ITEM(args, 0))) Py_RETURN_NONE;
  PyObject* dim = n > 1 ? PyTuple_GET_ITEM(args, 1) : nullptr;
  PyObject* keepdim = n > 2 ? PyTuple_GET_ITEM(args, 2) : Py_False;
  PyObject* dtype_arg = Py_None;
  if (kwargs != Py_None) {
    if (!PyDict_CheckExact(kwargs)) Py_RETURN_NONE;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      if (!PyUnicode_Check(key)) Py_RETURN_NONE;
      if (n == 1 && key_is(key, "dim")) {
        dim = value;
      } else if (n < 3 && key_is(key, "keepdim")) {
        keepdim = value;
      } else if (key_is(key, "dtype")) {
        dtype_arg = value;
      } else {
        Py_RETURN_NONE;  // out=, axis=, keepdims=, or one given twice: torch's parser decides
      }
    }
  }
  if (keepdim != Py_True && keepdim != Py_False) Py_RETURN_NONE;
  std::optional<at::ScalarType> dtype;
  if (parse_dtype(dtype_arg, &dtype) != Parsed::kTaken) Py_RETURN_NONE;
  std::optional<DimList> dims;
  const Parsed p = parse_dims(dim, &dims);
  if (p == Parsed::kError) PyErr_Clear();  // torch's parser raises its own error for it
  if (p != Parsed::kTaken) Py_RETURN_NONE;
  const at::Tensor& x = THPVariable_Unpack(PyTuple_GET_ITEM(args, 0));
  if (!operator_takes(x)) Py_RETURN_NONE;
  return THPVariable_Wrap(call_sum(x, dims, keepdim == Py_True, dtype));
  END_HANDLE_TH_ERRORS
}

PyObject* set_patched(PyObject* /*self*/, PyObject* on) {
  g_patched.store(PyObject_IsTrue(on) == 1);
  Py_RETURN_NONE;
}

PyObject* enter_block(PyObject* /*self*/, PyObject* /*unused*/) {
  ++t_blocks;
  Py_RETURN_NONE;
}

PyObject* exit_block(PyObject* /*self*/, PyObject* /*unused*/) {
  --t_blocks;
  Py_RETURN_NONE;
}

PyObject* in_block(PyObject* /*self*/, PyObject* /*unused*/) { return PyBool_FromLong(t_blocks > 0); }

template <auto F>
PyCFunction fastcall() {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(F));
}

constexpr const char* kSumDoc =
    "sum($module, input, dim=None, keepdim=False, *, dtype=None, out=None, kernel=None)\n"
    "--\n"
    "\n"
    "Sum of ``input`` over ``dim``, exactly as ``torch.sum`` computes it.\n"
    "\n"
    "Args:\n"
    "    input: the tensor to sum.\n"
    "    dim: a dim or dims to reduce (ints, numpy ints or 0-d integer\n"
    "        tensors, alone or in a list or tuple); ``None`` or ``[]`` reduce\n"
    "        all of them. Dims named by str (named tensors) are left to\n"
    "        ``torch.sum``.\n"
    "    keepdim: keep reduced dims with size 1.\n"
    "    dtype: the result (and accumulation input) dtype, a torch dtype or a\n"
    "        Python type (``float`` is float64); by default int and bool\n"
    "        promote to int64 and other dtypes keep their own.\n"
    "    out: optional output tensor, resized as torch.sum resizes it.\n"
    "    axis, keepdims: numpy's names for dim and keepdim, taken as torch.sum\n"
    "        takes them.\n"
    "    kernel: one of ``reduce_op.kernels()`` to run a classic teaching kernel\n"
    "        instead of the production engine. It sums every element (``dim``,\n"
    "        ``keepdim``, ``dtype`` and ``out`` must be left at their defaults).\n"
    "\n"
    "Returns:\n"
    "    The sum; ``out`` itself when ``out`` is given.\n";

PyMethodDef methods[] = {
    {"sum", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&sum)), METH_FASTCALL | METH_KEYWORDS,
     kSumDoc},
    {"set_sum_general", fastcall<&set_sum_general>(), METH_FASTCALL,
     "set_sum_general(sum_general, has_torch_function): the Python sum for the forms sum does not take"},
    {"sum_all", fastcall<&sum_all>(), METH_FASTCALL, "sum_all(input, dtype): gpureduce::sum.default"},
    {"sum_dims", fastcall<&sum_dims>(), METH_FASTCALL,
     "sum_dims(input, dims, keepdim, dtype): gpureduce::sum.dim_IntList"},
    {"dropin_sum", fastcall<&dropin_sum>(), METH_FASTCALL,
     "dropin_sum(args, kwargs): the result of a routed torch.sum call, or None (see fast_calls.cpp)"},
    {"set_patched", set_patched, METH_O, "set_patched(on): reduce_op.patch() in force or not"},
    {"enter_block", enter_block, METH_NOARGS, "a replace_torch_sum() block opens on this thread"},
    {"exit_block", exit_block, METH_NOARGS, "a replace_torch_sum() block closes on this thread"},
    {"in_block", in_block, METH_NOARGS, "whether this thread is inside a replace_torch_sum() block"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", "Typed calls of gpureduce's operators (see fast_calls.cpp).",
                      -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__fast() { return PyModule_Create(&module); }
