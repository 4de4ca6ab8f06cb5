// fixture: a host header that includes a DMA model header by a relative path.
#pragma once
#include "../dma/engine.h"
