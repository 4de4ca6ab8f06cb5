// fixture: an ERNIC model header.
#pragma once
