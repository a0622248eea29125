// The grid of requests the tensor tests run on every device: contractions of many mode patterns (matrix-like,
// batched, broadcast, permuted outputs, outer products, full contractions to a scalar, tensor-network shapes), and
// elementwise operations, reductions and permutations with broadcasting and permuted outputs.
#pragma once

#include <vector>

#include "tensor_testing.hpp"

namespace accel::tensor::testing {

inline const Sizes kSizes = {{'a', 3}, {'b', 2}, {'c', 4}, {'d', 5}, {'e', 3}, {'f', 2},
                             {'h', 3}, {'i', 7}, {'j', 6}, {'k', 9}, {'q', 5}, {'x', 1}};

// Contractions as einsum (A, B, D).
inline std::vector<Spec> contraction_grid(DType dtype) {
  const char* patterns[][3] = {
      {"ik", "kj", "ij"},        // matrix product
      {"ki", "jk", "ji"},        // transposed operands
      {"bik", "bkj", "bij"},     // batched
      {"bhqd", "bhkd", "bhqk"},  // attention scores
      {"bhqk", "bhkd", "bhqd"},  // attention output
      {"bij", "jk", "bik"},      // B broadcast over b
      {"ij", "bjk", "bki"},      // A broadcast over b, output permuted
      {"abc", "cd", "dba"},      // permuted output
      {"i", "j", "ij"},          // outer product
      {"ij", "ij", ""},          // full contraction to a scalar
      {"abcd", "cdef", "abef"},  // tensor network: two modes summed
      {"aib", "bjc", "aijc"},    // tensor network: a chain
      {"ibk", "kbj", "bji"},     // batch mode in the middle
      {"axk", "kx", "xa"},       // extent-1 modes
  };
  std::vector<Spec> specs;
  for (const auto& p : patterns) {
    specs.push_back({.op = Op::contract,
                     .a = p[0],
                     .b = p[1],
                     .d = p[2],
                     .sizes = kSizes,
                     .dtype = dtype,
                     .alpha = 1.5,
                     .beta = 0.0});
  }
  // alpha and beta, with C apart or in place.
  specs.push_back({.op = Op::contract,
                   .a = "bik",
                   .b = "bkj",
                   .d = "bji",
                   .sizes = kSizes,
                   .dtype = dtype,
                   .alpha = 0.5,
                   .beta = -2.0});
  specs.push_back({.op = Op::contract,
                   .a = "ik",
                   .b = "kj",
                   .d = "ij",
                   .sizes = kSizes,
                   .dtype = dtype,
                   .alpha = 1.0,
                   .beta = 1.0,
                   .in_place = true});
  return specs;
}

// Elementwise, reduction and permutation requests (inputs positive: sqrt, log and rcp are among the operators).
inline std::vector<Spec> elementwise_grid(DType dtype) {
  const Sizes& s = kSizes;
  return {
      {.op = Op::binary,
       .a = "ij",
       .d = "ij",
       .sizes = s,
       .dtype = dtype,
       .op1 = Binary::add,
       .alpha = 2.0,
       .gamma = 0.5},
      {.op = Op::binary,
       .a = "ji",
       .d = "ij",
       .sizes = s,
       .dtype = dtype,
       .op_a = Unary::sqrt,
       .op_c = Unary::exp,
       .op1 = Binary::mul,
       .alpha = 1.0,
       .gamma = 1.0},
      {.op = Op::binary,
       .a = "j",
       .d = "bij",
       .sizes = s,
       .dtype = dtype,
       .op_a = Unary::log,
       .op1 = Binary::max,
       .alpha = 1.0,
       .gamma = 1.0,
       .in_place = true},
      {.op = Op::binary,
       .a = "cab",
       .d = "abc",
       .sizes = s,
       .dtype = dtype,
       .op_a = Unary::rcp,
       .op_c = Unary::tanh,
       .op1 = Binary::min,
       .alpha = 0.25,
       .gamma = 2.0},
      {.op = Op::trinary,
       .a = "ik",
       .b = "ki",
       .d = "ik",
       .sizes = s,
       .dtype = dtype,
       .op_a = Unary::sigmoid,
       .op_b = Unary::abs,
       .op1 = Binary::add,
       .op2 = Binary::mul,
       .alpha = 1.0,
       .beta = -1.0,
       .gamma = 1.0},
      {.op = Op::trinary,
       .a = "a",
       .b = "c",
       .d = "cba",
       .sizes = s,
       .dtype = dtype,
       .op_c = Unary::relu,
       .op1 = Binary::mul,
       .op2 = Binary::add,
       .alpha = 1.0,
       .beta = 1.0,
       .gamma = 0.0,
       .in_place = true},
      {.op = Op::reduce, .a = "ijk", .d = "ki", .sizes = s, .dtype = dtype, .op1 = Binary::add, .alpha = 1.0},
      {.op = Op::reduce, .a = "ijk", .d = "", .sizes = s, .dtype = dtype, .op1 = Binary::max, .alpha = 1.0},
      {.op = Op::reduce,
       .a = "bhqd",
       .d = "hb",
       .sizes = s,
       .dtype = dtype,
       .op_a = Unary::sqrt,
       .op1 = Binary::mul,
       .alpha = 1.0},
      {.op = Op::reduce,
       .a = "abc",
       .d = "ca",
       .sizes = s,
       .dtype = dtype,
       .op1 = Binary::min,
       .alpha = 2.0,
       .beta = 0.5},
      {.op = Op::permute, .a = "abc", .d = "cab", .sizes = s, .dtype = dtype, .alpha = 1.0},
      {.op = Op::permute, .a = "bhqd", .d = "bqhd", .sizes = s, .dtype = dtype, .op_a = Unary::neg, .alpha = 0.5},
      {.op = Op::permute, .a = "ac", .d = "cba", .sizes = s, .dtype = dtype, .alpha = 1.0},
  };
}

}  // namespace accel::tensor::testing
