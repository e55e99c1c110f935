#include "tune/metrics.h"
