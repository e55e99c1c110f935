// Test layers: tar.gz files written with libarchive, entry by entry.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <string>
#include <vector>

namespace trainyard::image::testing {

struct TarEntry {
  std::string path;
  char type = 'f';      // f file, d directory, l symlink, h hard link
  std::string content;  // a file's bytes; a link's target
  int mode = 0644;
};

// Writes `entries` to `path` as a gzip-compressed tar (a layer blob), or
// an uncompressed one.
inline void WriteLayer(const std::string& path, const std::vector<TarEntry>& entries,
                       bool gzip = true) {
  archive* a = archive_write_new();
  if (gzip) archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  archive_write_open_filename(a, path.c_str());
  for (const TarEntry& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_perm(entry, e.mode);
    switch (e.type) {
      case 'd':
        archive_entry_set_filetype(entry, AE_IFDIR);
        break;
      case 'l':
        archive_entry_set_filetype(entry, AE_IFLNK);
        archive_entry_set_symlink(entry, e.content.c_str());
        break;
      case 'h':
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_hardlink(entry, e.content.c_str());
        break;
      default:
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_size(entry, static_cast<la_int64_t>(e.content.size()));
    }
    archive_write_header(a, entry);
    if (e.type == 'f') archive_write_data(a, e.content.data(), e.content.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
}

}  // namespace trainyard::image::testing
