// Listening sockets that no other process shares.
#pragma once

namespace trainyard {

// For a socket about to listen: SO_REUSEADDR (a restarted server binds
// again while its old connections linger in TIME_WAIT), and not
// SO_REUSEPORT, httplib's default, under which a second server on the same
// port starts without a word and takes half the connections. A second one
// then fails to bind: "Address already in use".
void SetExclusiveListenOptions(int fd);

}  // namespace trainyard
