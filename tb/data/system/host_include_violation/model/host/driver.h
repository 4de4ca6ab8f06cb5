// fixture for tb/system/check_host_includes.cmake: a host header that reaches
// an ERNIC model header through another project header.
#pragma once
#include <cstdint>
#include "model/link/port.h"
