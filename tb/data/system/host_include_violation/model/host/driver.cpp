// fixture: a clean host file.
#include "model/host/driver.h"
