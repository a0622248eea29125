// The families the registry knows (registry.cpp), each defined in its own file of this folder.
#pragma once

#include "embed/families/family.hpp"

namespace accel::embed {

extern const Family kBertFamily;        // bert.cpp
extern const Family kRobertaFamily;     // bert.cpp
extern const Family kDistilbertFamily;  // distilbert.cpp
extern const Family kQwen3Family;       // qwen.cpp
extern const Family kQwen2Family;       // qwen.cpp
extern const Family kModernBertFamily;  // modernbert.cpp
extern const Family kNomicBertFamily;   // nomic_bert.cpp
extern const Family kGteFamily;         // gte.cpp

}  // namespace accel::embed
