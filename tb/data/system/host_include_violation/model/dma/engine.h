// fixture: a DMA model header.
#pragma once
