#include "common/listen.h"

#include <sys/socket.h>

namespace trainyard {

void SetExclusiveListenOptions(int fd) {
  int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

}  // namespace trainyard
