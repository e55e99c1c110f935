#include "tune/settings.h"
