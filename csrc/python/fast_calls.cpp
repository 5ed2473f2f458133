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
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

using SumAll = at::Tensor(const at::Tensor&, std::optional<at::ScalarType>);
using SumDims = at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>);
using DimList = c10::SmallVector<int64_t, 6>;

// Overload kName.kOverload's typed handle, looked up once.
template <class Sig, const char* kName, const char* kOverload>
c10::TypedOperatorHandle<Sig>& typed_op() {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow(kName, kOverload).typed<Sig>();
  return op;
}

constexpr char kSum[] = "gpureduce::sum";
constexpr char kDefault[] = "";
constexpr char kDimIntList[] = "dim_IntList";

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

// dim_given: a dim was passed, None included. torch.sum(x, dim=None) is the
// dim overload, which refuses inputs of more than 64 dims where sum(x) takes
// them; so is this.
at::Tensor call_sum(const at::Tensor& x, const std::optional<DimList>& dims, bool keepdim,
                    std::optional<at::ScalarType> dtype, bool dim_given) {
  GilReleased no_gil(x.numel() >= kReleaseGilElements);
  if (!dim_given && !keepdim) return typed_op<SumAll, kSum, kDefault>().call(x, dtype);
  const at::OptionalIntArrayRef dim_ref =
      dims.has_value() ? at::OptionalIntArrayRef(at::IntArrayRef(*dims)) : at::OptionalIntArrayRef(std::nullopt);
  return typed_op<SumDims, kSum, kDimIntList>().call(x, dim_ref, keepdim, dtype);
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
  return THPVariable_Wrap(call_sum(THPVariable_Unpack(argv[0]), std::nullopt, false, dtype, false));
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
  return THPVariable_Wrap(call_sum(THPVariable_Unpack(argv[0]), dims, argv[2] == Py_True, dtype, true));
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

// A fast call's arguments in their slots: the positional ones in order (at
// most max_positional), the keywords where slot_of puts them. False where
// one is unknown or given twice: the Python function then raises as Python
// does.
template <int N>
bool bind_slots(PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames, Py_ssize_t max_positional,
                int (*slot_of)(PyObject*), PyObject* (&arg)[N]) {
  if (nargs > max_positional) return false;
  for (Py_ssize_t i = 0; i < nargs; ++i) arg[i] = argv[i];
  const Py_ssize_t n_kw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < n_kw; ++k) {
    const int slot = slot_of(PyTuple_GET_ITEM(kwnames, k));
    if (slot < 0 || slot >= N || arg[slot] != nullptr) return false;
    arg[slot] = argv[nargs + k];
  }
  return true;
}

PyObject* sum(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  TORCH_CHECK(g_sum_general != nullptr, "reduce_op._fast.sum: reduce_op has not set its Python sum");
  PyObject* arg[kSumSlots] = {};
  bool take = bind_slots(argv, nargs, kwnames, 3, &sum_keyword_slot, arg);
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
  // keepdim without a dim (None included) matches none of torch.sum's
  // overloads: its TypeError.
  if (take && arg[2] != nullptr && arg[1] == nullptr && arg[6] == nullptr) {
    PyErr_SetString(PyExc_TypeError, "sum() received an invalid combination of arguments - got (Tensor, keepdim=...)"
                                     ", but expected (Tensor input, tuple of ints dim, bool keepdim, *, torch.dtype "
                                     "dtype) or (Tensor input, *, torch.dtype dtype)");
    return nullptr;
  }
  // So does out= without a dim (out=None included): torch.sum's overload
  // with out= takes a dim.
  if (take && arg[4] != nullptr && arg[1] == nullptr && arg[6] == nullptr) {
    PyErr_SetString(PyExc_TypeError, "sum() received an invalid combination of arguments - got (Tensor, out=...), "
                                     "but expected (Tensor input, tuple of ints dim, bool keepdim, *, torch.dtype "
                                     "dtype, Tensor out) or (Tensor input, *, torch.dtype dtype)");
    return nullptr;
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
    if (!x.is_nested()) return THPVariable_Wrap(call_sum(x, dims, arg[2] == Py_True, dtype, arg[1] != nullptr));
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
  // keepdim without a dim matches none of torch.sum's overloads: torch's
  // parser raises its TypeError.
  if (dim == nullptr && (n > 2 || (kwargs != Py_None && PyDict_GetItemString(kwargs, "keepdim") != nullptr)))
    Py_RETURN_NONE;
  std::optional<at::ScalarType> dtype;
  if (parse_dtype(dtype_arg, &dtype) != Parsed::kTaken) Py_RETURN_NONE;
  std::optional<DimList> dims;
  const Parsed p = parse_dims(dim, &dims);
  if (p == Parsed::kError) PyErr_Clear();  // torch's parser raises its own error for it
  if (p != Parsed::kTaken) Py_RETURN_NONE;
  const at::Tensor& x = THPVariable_Unpack(PyTuple_GET_ITEM(args, 0));
  if (!operator_takes(x)) Py_RETURN_NONE;
  return THPVariable_Wrap(call_sum(x, dims, keepdim == Py_True, dtype, dim != nullptr));
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

// ---- The family's overloads (reduce_op/__init__.py) ----
//
// reduce_op's other ops are Python functions that put their arguments in
// the operator's forms and call an overload. Where torch.ops would add
// nothing (reduce_op._calls.fast_path_open: no torch.compile tracing, no
// __torch_function__ override or mode), they call it here, through its
// typed handle; a form these functions do not take returns NotImplemented
// and the caller goes through torch.ops, which raises torch's error for it.
// Through torch.ops, amax of 1000 float32 elements cost 2.0x torch.amax's
// time and argmax 1.35x (CPU, one thread; NOTES.md, session 40).

// The operator's call f() with the GIL released on large inputs (as
// call_sum).
template <class F>
auto call_without_gil(const at::Tensor& x, F&& f) {
  GilReleased no_gil(x.numel() >= kReleaseGilElements);
  return f();
}

// Strict readers of the forms the Python functions pass: each says whether
// o is one, with no Python error left set.
bool read_tensor(PyObject* o, const at::Tensor** x) {
  if (!THPVariable_Check(o)) return false;
  *x = &THPVariable_Unpack(o);
  return true;
}
bool read_bool(PyObject* o, bool* b) {
  if (o != Py_True && o != Py_False) return false;
  *b = o == Py_True;
  return true;
}
bool read_int(PyObject* o, int64_t* v) {
  const Parsed p = plain_int(o, v);
  if (p == Parsed::kError) PyErr_Clear();
  return p == Parsed::kTaken;
}
bool read_optional_int(PyObject* o, std::optional<int64_t>* v) {
  if (o == Py_None) return true;
  int64_t i;
  if (!read_int(o, &i)) return false;
  *v = i;
  return true;
}
bool read_dims(PyObject* o, std::optional<DimList>* dims) {
  const Parsed p = parse_dims(o, dims);
  if (p == Parsed::kError) PyErr_Clear();
  return p == Parsed::kTaken;
}
bool read_dtype(PyObject* o, std::optional<at::ScalarType>* dtype) { return parse_dtype(o, dtype) == Parsed::kTaken; }
// A Python int within int64 or a float (not a bool); None where `none_ok`.
bool read_scalar(PyObject* o, std::optional<at::Scalar>* v, bool none_ok) {
  if (o == Py_None) return none_ok;
  if (PyFloat_CheckExact(o)) {
    *v = at::Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  int64_t i;
  if (!read_int(o, &i)) return false;
  *v = at::Scalar(i);
  return true;
}

at::OptionalIntArrayRef optional_dims(const std::optional<DimList>& dims) {
  return dims.has_value() ? at::OptionalIntArrayRef(at::IntArrayRef(*dims)) : at::OptionalIntArrayRef(std::nullopt);
}

PyObject* not_taken() { Py_RETURN_NOTIMPLEMENTED; }

constexpr char kAmax[] = "gpureduce::amax";
constexpr char kAmin[] = "gpureduce::amin";
constexpr char kLogsumexp[] = "gpureduce::logsumexp";
constexpr char kNansum[] = "gpureduce::nansum";
constexpr char kMean[] = "gpureduce::mean";
constexpr char kProd[] = "gpureduce::prod";
constexpr char kMax[] = "gpureduce::max";
constexpr char kMin[] = "gpureduce::min";
constexpr char kArgmax[] = "gpureduce::argmax";
constexpr char kArgmin[] = "gpureduce::argmin";
constexpr char kVar[] = "gpureduce::var";
constexpr char kStd[] = "gpureduce::std";
constexpr char kVarMean[] = "gpureduce::var_mean";
constexpr char kStdMean[] = "gpureduce::std_mean";
constexpr char kVectorNorm[] = "gpureduce::linalg_vector_norm";
constexpr char kDim[] = "dim";
constexpr char kDimInt[] = "dim_int";
constexpr char kCorrection[] = "correction";

// (input, dims, keepdim) of an `int[1] dim` schema: amax, amin, logsumexp.
template <const char* kName>
PyObject* dims_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  using Sig = at::Tensor(const at::Tensor&, at::IntArrayRef, bool);
  const at::Tensor* x;
  std::optional<DimList> dims;
  bool keepdim;
  if (argc != 3 || !read_tensor(argv[0], &x) || !read_dims(argv[1], &dims) || !dims.has_value() ||
      !read_bool(argv[2], &keepdim))
    return not_taken();
  return THPVariable_Wrap(call_without_gil(*x, [&] {
    return typed_op<Sig, kName, kDefault>().call(*x, at::IntArrayRef(*dims), keepdim);
  }));
  END_HANDLE_TH_ERRORS
}

// (input, dims or None, keepdim, dtype): nansum, mean.dim (sum's dim form).
template <const char* kName, const char* kOverload>
PyObject* dims_dtype_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  const at::Tensor* x;
  std::optional<DimList> dims;
  bool keepdim;
  std::optional<at::ScalarType> dtype;
  if (argc != 4 || !read_tensor(argv[0], &x) || !read_dims(argv[1], &dims) || !read_bool(argv[2], &keepdim) ||
      !read_dtype(argv[3], &dtype))
    return not_taken();
  return THPVariable_Wrap(call_without_gil(*x, [&] {
    return typed_op<SumDims, kName, kOverload>().call(*x, optional_dims(dims), keepdim, dtype);
  }));
  END_HANDLE_TH_ERRORS
}

// (input, dtype): mean and prod of every element.
template <const char* kName>
PyObject* all_dtype_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  const at::Tensor* x;
  std::optional<at::ScalarType> dtype;
  if (argc != 2 || !read_tensor(argv[0], &x) || !read_dtype(argv[1], &dtype)) return not_taken();
  return THPVariable_Wrap(
      call_without_gil(*x, [&] { return typed_op<SumAll, kName, kDefault>().call(*x, dtype); }));
  END_HANDLE_TH_ERRORS
}

// (input, dim, keepdim, dtype): prod.dim_int.
PyObject* prod_dim_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  using Sig = at::Tensor(const at::Tensor&, int64_t, bool, std::optional<at::ScalarType>);
  const at::Tensor* x;
  int64_t dim;
  bool keepdim;
  std::optional<at::ScalarType> dtype;
  if (argc != 4 || !read_tensor(argv[0], &x) || !read_int(argv[1], &dim) || !read_bool(argv[2], &keepdim) ||
      !read_dtype(argv[3], &dtype))
    return not_taken();
  return THPVariable_Wrap(
      call_without_gil(*x, [&] { return typed_op<Sig, kProd, kDimInt>().call(*x, dim, keepdim, dtype); }));
  END_HANDLE_TH_ERRORS
}

// (input): max and min of every element (for extreme_entry).
template <const char* kName>
PyObject* all_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  using Sig = at::Tensor(const at::Tensor&);
  const at::Tensor* x;
  if (argc != 1 || !read_tensor(argv[0], &x)) return not_taken();
  return THPVariable_Wrap(call_without_gil(*x, [&] { return typed_op<Sig, kName, kDefault>().call(*x); }));
  END_HANDLE_TH_ERRORS
}

// (input, dim or None, keepdim): argmax, argmin.
template <const char* kName>
PyObject* arg_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  using Sig = at::Tensor(const at::Tensor&, std::optional<int64_t>, bool);
  const at::Tensor* x;
  std::optional<int64_t> dim;
  bool keepdim;
  if (argc != 3 || !read_tensor(argv[0], &x) || !read_optional_int(argv[1], &dim) || !read_bool(argv[2], &keepdim))
    return not_taken();
  return THPVariable_Wrap(
      call_without_gil(*x, [&] { return typed_op<Sig, kName, kDefault>().call(*x, dim, keepdim); }));
  END_HANDLE_TH_ERRORS
}

// torch.return_types.max and .min (set_return_types), whose instances
// max.dim and min.dim return.
PyTypeObject* g_max_type = nullptr;
PyTypeObject* g_min_type = nullptr;

// A (values, indices) pair as an instance of `type`, or a plain tuple.
PyObject* wrap_pair(std::tuple<at::Tensor, at::Tensor> r, PyTypeObject* type) {
  PyObject* out = type != nullptr ? PyStructSequence_New(type) : PyTuple_New(2);
  if (out == nullptr) return nullptr;
  PyObject* first = THPVariable_Wrap(std::move(std::get<0>(r)));
  PyObject* second = THPVariable_Wrap(std::move(std::get<1>(r)));
  if (first == nullptr || second == nullptr) {
    Py_XDECREF(first);
    Py_XDECREF(second);
    Py_DECREF(out);
    return nullptr;
  }
  if (type != nullptr) {
    PyStructSequence_SetItem(out, 0, first);
    PyStructSequence_SetItem(out, 1, second);
  } else {
    PyTuple_SET_ITEM(out, 0, first);
    PyTuple_SET_ITEM(out, 1, second);
  }
  return out;
}

// (input, dim, keepdim): max.dim and min.dim, as torch.return_types (for
// extreme_entry).
template <const char* kName>
PyObject* extreme_dim_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  using Sig = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, bool);
  PyTypeObject* type = kName == kMax ? g_max_type : g_min_type;
  const at::Tensor* x;
  int64_t dim;
  bool keepdim;
  if (type == nullptr || argc != 3 || !read_tensor(argv[0], &x) || !read_int(argv[1], &dim) ||
      !read_bool(argv[2], &keepdim))
    return not_taken();
  return wrap_pair(call_without_gil(*x, [&] { return typed_op<Sig, kName, kDim>().call(*x, dim, keepdim); }), type);
  END_HANDLE_TH_ERRORS
}

// ---- reduce_op.max and reduce_op.min themselves ----
//
// As reduce_op.sum (above): the forms most calls use, max(x), max(x, dim)
// and max(x, dim, keepdim) with dim a plain int and keepdim a bool, by
// position or by name, no out= (or None), a tensor without a __torch_function__
// override or mode and not nested, are taken here (all_call,
// extreme_dim_call); every other call goes, as given, to reduce_op._max or
// _min, which take all forms and which torch.compile traces in their place.
// As Python functions asking the same before their typed calls, max(x) and
// min(x) cost 1.03 us on 10 float32 elements where torch.max() costs 0.67
// (CPU, one thread; NOTES.md, session 45).

PyObject* g_extreme_general[2] = {nullptr, nullptr};  // reduce_op._max, reduce_op._min

// The slot of a keyword argument of max and min: 0 input, 1 dim, 2
// keepdim, 3 out; -1 for any other name.
int extreme_keyword_slot(PyObject* key) {
  static const char* const kNames[4] = {"input", "dim", "keepdim", "out"};
  if (!PyUnicode_Check(key)) return -1;
  for (int i = 0; i < 4; ++i) {
    if (key_is(key, kNames[i])) return i;
  }
  return -1;
}

template <const char* kName>
PyObject* extreme_entry(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames) {
  HANDLE_TH_ERRORS
  PyObject* general = g_extreme_general[kName == kMax ? 0 : 1];
  TORCH_CHECK(general != nullptr && g_has_torch_function != nullptr,
              "reduce_op._fast.max/min: reduce_op has not set its Python functions");
  PyObject* arg[4] = {};
  bool take = bind_slots(argv, nargs, kwnames, 3, &extreme_keyword_slot, arg);
  // dim=None, or keepdim without a dim, matches none of torch.max's
  // overloads: its TypeError (the signature's None and False stand for a
  // dim and keepdim left out).
  if (take && arg[0] != nullptr && (arg[1] == Py_None || (arg[1] == nullptr && arg[2] != nullptr))) {
    PyErr_Format(PyExc_TypeError, "%s() received an invalid combination of arguments - got (Tensor, %s)", kName,
                 arg[1] == Py_None ? "dim=NoneType" : "keepdim without dim");
    return nullptr;
  }
  // (of every element: dim and keepdim left out)
  const bool whole = arg[1] == nullptr;
  take = take && arg[0] != nullptr && THPVariable_Check(arg[0]) && (arg[3] == nullptr || arg[3] == Py_None) &&
         (whole ? arg[2] == nullptr : PyLong_CheckExact(arg[1]) && (arg[2] == nullptr || PyBool_Check(arg[2])));
  if (take) {
    PyObject* has = PyObject_CallOneArg(g_has_torch_function, arg[0]);
    if (has == nullptr) return nullptr;
    take = has == Py_False && !THPVariable_Unpack(arg[0]).is_nested();
    Py_DECREF(has);
  }
  if (take) {
    PyObject* r = nullptr;
    if (whole) {
      r = all_call<kName>(nullptr, arg, 1);
    } else {
      PyObject* const call[3] = {arg[0], arg[1], arg[2] == nullptr ? Py_False : arg[2]};
      r = extreme_dim_call<kName>(nullptr, call, 3);
    }
    if (r != Py_NotImplemented) return r;  // (a result, or an error set)
    Py_DECREF(r);
  }
  return PyObject_Vectorcall(general, argv, nargs, kwnames);
  END_HANDLE_TH_ERRORS
}

// set_extreme_general(max_general, min_general): what max and min call for
// the forms they do not take (with set_sum_general's __torch_function__ test).
PyObject* set_extreme_general(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  if (argc != 2 || !PyCallable_Check(argv[0]) || !PyCallable_Check(argv[1])) {
    PyErr_SetString(PyExc_TypeError, "set_extreme_general(max_general, min_general)");
    return nullptr;
  }
  for (int i = 0; i < 2; ++i) {
    Py_INCREF(argv[i]);
    Py_XSETREF(g_extreme_general[i], argv[i]);
  }
  Py_RETURN_NONE;
}

// (input, dims or None, correction or None, keepdim): var, std (one
// tensor) and var_mean, std_mean (a tuple) by their .correction overloads.
template <const char* kName, class Result>
PyObject* spread_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  using Sig = Result(const at::Tensor&, at::OptionalIntArrayRef, const std::optional<at::Scalar>&, bool);
  const at::Tensor* x;
  std::optional<DimList> dims;
  std::optional<at::Scalar> correction;
  bool keepdim;
  if (argc != 4 || !read_tensor(argv[0], &x) || !read_dims(argv[1], &dims) ||
      !read_scalar(argv[2], &correction, true) || !read_bool(argv[3], &keepdim))
    return not_taken();
  auto r = call_without_gil(*x, [&] {
    return typed_op<Sig, kName, kCorrection>().call(*x, optional_dims(dims), correction, keepdim);
  });
  if constexpr (std::is_same_v<Result, at::Tensor>) {
    return THPVariable_Wrap(std::move(r));
  } else {
    return wrap_pair(std::move(r), nullptr);
  }
  END_HANDLE_TH_ERRORS
}

// (input, ord, dims or None, keepdim, dtype): linalg_vector_norm.
PyObject* vector_norm_call(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  using Sig = at::Tensor(const at::Tensor&, const at::Scalar&, at::OptionalIntArrayRef, bool,
                         std::optional<at::ScalarType>);
  const at::Tensor* x;
  std::optional<at::Scalar> ord;
  std::optional<DimList> dims;
  bool keepdim;
  std::optional<at::ScalarType> dtype;
  if (argc != 5 || !read_tensor(argv[0], &x) || !read_scalar(argv[1], &ord, false) || !read_dims(argv[2], &dims) ||
      !read_bool(argv[3], &keepdim) || !read_dtype(argv[4], &dtype))
    return not_taken();
  return THPVariable_Wrap(call_without_gil(*x, [&] {
    return typed_op<Sig, kVectorNorm, kDefault>().call(*x, *ord, optional_dims(dims), keepdim, dtype);
  }));
  END_HANDLE_TH_ERRORS
}

// set_return_types(max, min): torch.return_types.max and .min.
PyObject* set_return_types(PyObject* /*self*/, PyObject* const* argv, Py_ssize_t argc) {
  if (argc != 2 || !PyType_Check(argv[0]) || !PyType_Check(argv[1])) {
    PyErr_SetString(PyExc_TypeError, "set_return_types(max, min)");
    return nullptr;
  }
  Py_INCREF(argv[0]);
  Py_INCREF(argv[1]);
  Py_XDECREF(reinterpret_cast<PyObject*>(g_max_type));
  Py_XDECREF(reinterpret_cast<PyObject*>(g_min_type));
  g_max_type = reinterpret_cast<PyTypeObject*>(argv[0]);
  g_min_type = reinterpret_cast<PyTypeObject*>(argv[1]);
  Py_RETURN_NONE;
}

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

constexpr const char* kMaxDoc =
    "max($module, input, dim=None, keepdim=False, *, out=None)\n"
    "--\n"
    "\n"
    "Mirrors torch.max's reductions: ``max(input)`` is the largest element\n"
    "(NaN if any is), in the input's dtype; ``max(input, dim, keepdim=False)``\n"
    "is the named tuple (values, indices) of each slice's largest element and\n"
    "the index of its first occurrence along ``dim`` (of the first NaN where\n"
    "the slice holds one), as torch's; ``out=`` takes a (values, indices)\n"
    "pair. The values' gradient goes to the element each index names; of\n"
    "every element, it is split evenly among the ties. (torch.max(input,\n"
    "other), the elementwise maximum, is not a reduction and is not here.)\n";

constexpr const char* kMinDoc =
    "min($module, input, dim=None, keepdim=False, *, out=None)\n"
    "--\n"
    "\n"
    "Mirrors torch.min's reductions: as reduce_op.max, for the smallest\n"
    "element.\n";

PyMethodDef methods[] = {
    {"sum", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&sum)), METH_FASTCALL | METH_KEYWORDS,
     kSumDoc},
    {"max", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&extreme_entry<kMax>)),
     METH_FASTCALL | METH_KEYWORDS, kMaxDoc},
    {"min", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&extreme_entry<kMin>)),
     METH_FASTCALL | METH_KEYWORDS, kMinDoc},
    {"set_extreme_general", fastcall<&set_extreme_general>(), METH_FASTCALL,
     "set_extreme_general(max_general, min_general): the Python max and min for the forms they do not take"},
    {"set_sum_general", fastcall<&set_sum_general>(), METH_FASTCALL,
     "set_sum_general(sum_general, has_torch_function): the Python sum for the forms sum does not take"},
    {"sum_all", fastcall<&sum_all>(), METH_FASTCALL, "sum_all(input, dtype): gpureduce::sum.default"},
    {"sum_dims", fastcall<&sum_dims>(), METH_FASTCALL,
     "sum_dims(input, dims, keepdim, dtype): gpureduce::sum.dim_IntList"},
    {"dropin_sum", fastcall<&dropin_sum>(), METH_FASTCALL,
     "dropin_sum(args, kwargs): the result of a routed torch.sum call, or None (see fast_calls.cpp)"},
    {"amax", fastcall<&dims_call<kAmax>>(), METH_FASTCALL, "amax(input, dims, keepdim): gpureduce::amax"},
    {"amin", fastcall<&dims_call<kAmin>>(), METH_FASTCALL, "amin(input, dims, keepdim): gpureduce::amin"},
    {"logsumexp", fastcall<&dims_call<kLogsumexp>>(), METH_FASTCALL,
     "logsumexp(input, dims, keepdim): gpureduce::logsumexp"},
    {"nansum", fastcall<&dims_dtype_call<kNansum, kDefault>>(), METH_FASTCALL,
     "nansum(input, dims, keepdim, dtype): gpureduce::nansum"},
    {"mean_dims", fastcall<&dims_dtype_call<kMean, kDim>>(), METH_FASTCALL,
     "mean_dims(input, dims, keepdim, dtype): gpureduce::mean.dim"},
    {"mean_all", fastcall<&all_dtype_call<kMean>>(), METH_FASTCALL, "mean_all(input, dtype): gpureduce::mean"},
    {"prod_all", fastcall<&all_dtype_call<kProd>>(), METH_FASTCALL, "prod_all(input, dtype): gpureduce::prod"},
    {"prod_dim", fastcall<&prod_dim_call>(), METH_FASTCALL,
     "prod_dim(input, dim, keepdim, dtype): gpureduce::prod.dim_int"},
    {"argmax", fastcall<&arg_call<kArgmax>>(), METH_FASTCALL, "argmax(input, dim, keepdim): gpureduce::argmax"},
    {"argmin", fastcall<&arg_call<kArgmin>>(), METH_FASTCALL, "argmin(input, dim, keepdim): gpureduce::argmin"},
    {"var", fastcall<&spread_call<kVar, at::Tensor>>(), METH_FASTCALL,
     "var(input, dims, correction, keepdim): gpureduce::var.correction"},
    {"std", fastcall<&spread_call<kStd, at::Tensor>>(), METH_FASTCALL,
     "std(input, dims, correction, keepdim): gpureduce::std.correction"},
    {"var_mean", fastcall<&spread_call<kVarMean, std::tuple<at::Tensor, at::Tensor>>>(), METH_FASTCALL,
     "var_mean(input, dims, correction, keepdim): gpureduce::var_mean.correction"},
    {"std_mean", fastcall<&spread_call<kStdMean, std::tuple<at::Tensor, at::Tensor>>>(), METH_FASTCALL,
     "std_mean(input, dims, correction, keepdim): gpureduce::std_mean.correction"},
    {"vector_norm", fastcall<&vector_norm_call>(), METH_FASTCALL,
     "vector_norm(input, ord, dims, keepdim, dtype): gpureduce::linalg_vector_norm"},
    {"set_return_types", fastcall<&set_return_types>(), METH_FASTCALL,
     "set_return_types(max, min): torch.return_types.max and .min, for max_dim and min_dim"},
    {"set_patched", set_patched, METH_O, "set_patched(on): reduce_op.patch() in force or not"},
    {"enter_block", enter_block, METH_NOARGS, "a replace_torch_sum() block opens on this thread"},
    {"exit_block", exit_block, METH_NOARGS, "a replace_torch_sum() block closes on this thread"},
    {"in_block", in_block, METH_NOARGS, "whether this thread is inside a replace_torch_sum() block"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", "Typed calls of gpureduce's operators (see fast_calls.cpp).",
                      -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__fast() { return PyModule_Create(&module); }
