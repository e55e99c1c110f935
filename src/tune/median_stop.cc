#include "tune/median_stop.h"
