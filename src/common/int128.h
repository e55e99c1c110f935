// A 128-bit integer, for exact products of 64-bit amounts (ratios in parts
// per million, decimal scaling). GCC and Clang both provide it; the
// __extension__ keeps -Wpedantic quiet about it.
#pragma once

namespace trainyard {

__extension__ typedef __int128 Int128;

}  // namespace trainyard
