// The families the registry knows (registry.cpp), each defined in its own file of this folder.
#pragma once

#include "embed/families/family.hpp"

namespace accel::embed {

extern const Family kBertFamily;        // bert.cpp
extern const Family kRobertaFamily;     // bert.cpp
extern const Family kDistilbertFamily;  // distilbert.cpp

}  // namespace accel::embed
