// fixture: a link header that (wrongly) includes an ERNIC model header.
#pragma once
#include "model/ernic/ernic.h"
