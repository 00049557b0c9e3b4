#include "crossbow/core/serialize.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace crossbow {
namespace {

constexpr char kMagic[8] = {'C', 'R', 'B', 'W', 'T', 'N', 'S', '1'};

template <typename T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  template <typename T>
  T Get() {
    T value;
    std::memcpy(&value, Take(sizeof(T)), sizeof(T));
    return value;
  }
  const char* Take(size_t n) {
    CROSSBOW_ENFORCE(pos_ + n <= bytes_.size(), "tensor file '", path_, "' is truncated at byte ",
                     pos_);
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

 private:
  const std::string& bytes_;
  const std::string& path_;
  size_t pos_ = sizeof(kMagic);
};

uint32_t Crc(const std::string& bytes, size_t n) {
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), n));
}

void SyncFolderOf(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

void WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CROSSBOW_ENFORCE(fd >= 0, "cannot write '", tmp, "': ", std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      CROSSBOW_FAIL("writing '", tmp, "' failed: ", std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    CROSSBOW_FAIL("could not commit '", path, "': ", std::strerror(err));
  }
  SyncFolderOf(path);
}

void SaveTensors(const std::string& path,
                 const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  WriteFileAtomically(path, PackTensors(tensors));
}

std::string PackTensors(const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, static_cast<uint32_t>(tensors.size()));
  for (const auto& [name, t] : tensors) {
    CROSSBOW_ENFORCE(t->is_plain(), "tensor '", name, "' is not in plain layout; cannot save it");
    Put<uint32_t>(&out, static_cast<uint32_t>(name.size()));
    out += name;
    Put<uint8_t>(&out, static_cast<uint8_t>(t->dtype()));
    Put<uint32_t>(&out, static_cast<uint32_t>(t->ndim()));
    for (int64_t d : t->shape()) Put<int64_t>(&out, d);
    Put<uint64_t>(&out, t->nbytes());
    if (t->is_cpu()) {
      out.append(static_cast<const char*>(t->raw_data()), t->nbytes());
    } else {
      out.append(static_cast<const char*>(ToHost(*t).raw_data()), t->nbytes());
    }
  }
  Put<uint32_t>(&out, Crc(out, out.size()));
  return out;
}

std::map<std::string, Tensor> LoadTensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CROSSBOW_ENFORCE(in.good(), "cannot open tensor file '", path, "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return UnpackTensors(buffer.str(), path);
}

std::map<std::string, Tensor> UnpackTensors(const std::string& bytes, const std::string& path) {
  CROSSBOW_ENFORCE(
      bytes.size() >= sizeof(kMagic) + 8 && std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0,
      "'", path, "' is not a Crossbow tensor file");
  uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  CROSSBOW_ENFORCE(stored_crc == Crc(bytes, bytes.size() - 4), "tensor file '", path,
                   "' is truncated or corrupt (checksum mismatch)");
  Reader reader(bytes, path);
  std::map<std::string, Tensor> tensors;
  const uint32_t count = reader.Get<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t name_size = reader.Get<uint32_t>();
    std::string name(reader.Take(name_size), name_size);
    const auto dtype = static_cast<DataType>(reader.Get<uint8_t>());
    Shape shape(reader.Get<uint32_t>());
    for (int64_t& d : shape) d = reader.Get<int64_t>();
    const uint64_t nbytes = reader.Get<uint64_t>();
    Tensor& t = tensors[name];
    t.Resize(shape, dtype);
    CROSSBOW_ENFORCE(nbytes == t.nbytes(), "tensor '", name, "' in '", path, "' holds ", nbytes,
                     " bytes, its shape needs ", t.nbytes());
    std::memcpy(t.raw_data(), reader.Take(nbytes), nbytes);
  }
  return tensors;
}

}  // namespace crossbow
