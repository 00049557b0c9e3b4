// Converters, the Datum codec and a record reader for Python: results come back as plain
// dicts, and the GIL is released while a converter runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "crossbow/core/enforce.h"
#include "data/convert_sink.h"
#include "data/converters.h"
#include "data/datum.h"
#include "data/lmdb_io.h"

namespace py = pybind11;
using namespace crossbow::data;

namespace {

py::list Skips(const std::vector<SkippedRecord>& skipped) {
  py::list out;
  for (const auto& skip : skipped) out.append(py::make_tuple(skip.where, skip.reason, skip.detail));
  return out;
}

py::dict SummaryDict(const ConvertSummary& summary) {
  return py::dict(
      py::arg("db") = summary.db, py::arg("written") = summary.written,
      py::arg("skipped") = Skips(summary.skipped), py::arg("seconds") = summary.seconds,
      py::arg("labels") = summary.max_label >= summary.min_label
                              ? py::object(py::make_tuple(summary.min_label, summary.max_label))
                              : py::none(),
      py::arg("text") = summary.ToString());
}

py::dict DatumDict(const Datum& datum) {
  return py::dict(py::arg("channels") = datum.channels, py::arg("height") = datum.height,
                  py::arg("width") = datum.width, py::arg("data") = py::bytes(datum.data),
                  py::arg("label") = datum.label, py::arg("float_data") = datum.float_data,
                  py::arg("encoded") = datum.encoded);
}

// Runs a converter without the GIL and returns its summary as a dict.
template <typename F>
py::dict Convert(F&& convert) {
  ConvertSummary summary;
  {
    py::gil_scoped_release release;
    summary = convert();
  }
  return SummaryDict(summary);
}

WriteOptions Write(bool overwrite, bool progress) {
  WriteOptions options;
  options.overwrite = overwrite;
  options.progress = progress;
  return options;
}

// ConvertSink for Python: records written one by one, the DB renamed into place by finish(),
// DB.incomplete removed by abandon() (or when the object goes without finish()).
class RecordSink {
 public:
  RecordSink(const std::string& db, int64_t total, bool overwrite, bool progress)
      : sink_(std::make_unique<ConvertSink>(db, total, Write(overwrite, progress))) {}
  ConvertSink& sink() {
    CROSSBOW_ENFORCE_VALUE(sink_ != nullptr, "the record writer is closed (finished or abandoned)");
    return *sink_;
  }
  py::dict Finish() {
    const ConvertSummary summary = sink().Finish();
    sink_.reset();
    return SummaryDict(summary);
  }
  void Abandon() { sink_.reset(); }

 private:
  std::unique_ptr<ConvertSink> sink_;
};

}  // namespace

void BindConvert(py::module_& m) {
  // The imageset flags as fields, which crossbow.convert sets by their names.
  py::class_<ImagesetOptions>(m, "ImagesetOptions")
      .def(py::init<>())
      .def_readwrite("overwrite", &ImagesetOptions::overwrite)
      .def_readwrite("progress", &ImagesetOptions::progress)
      .def_readwrite("resize_width", &ImagesetOptions::resize_width)
      .def_readwrite("resize_height", &ImagesetOptions::resize_height)
      .def_readwrite("resize_shorter", &ImagesetOptions::resize_shorter)
      .def_readwrite("max_side", &ImagesetOptions::max_side)
      .def_readwrite("shuffle", &ImagesetOptions::shuffle)
      .def_readwrite("seed", &ImagesetOptions::seed)
      .def_readwrite("gray", &ImagesetOptions::gray)
      .def_readwrite("encoded", &ImagesetOptions::encoded)
      .def_readwrite("encode_type", &ImagesetOptions::encode_type)
      .def_readwrite("check_size", &ImagesetOptions::check_size);
  m.def(
      "imageset_flag_docs",
      [] {
        py::dict docs;
        for (const FlagDoc& flag : kImagesetFlagDocs) docs[flag.name] = flag.doc;
        return docs;
      },
      "{imageset flag: what it does}, the help of crossbow_convert's flags");
  m.def(
      "convert_imageset",
      [](const std::string& root, const std::string& list_file, const std::string& db,
         const ImagesetOptions& options, bool by_folder) {
        return Convert([&] {
          return by_folder ? ConvertImageFolders(root, db, options)
                           : ConvertImageset(root, list_file, db, options);
        });
      },
      "Image files to an LMDB, as Caffe's convert_imageset; list_file is ignored with by_folder",
      py::arg("root"), py::arg("list_file"), py::arg("db"), py::arg("options"),
      py::arg("by_folder") = false);
  m.def(
      "convert_mnist",
      [](const std::string& images, const std::string& labels, const std::string& db,
         bool overwrite, bool progress) {
        return Convert(
            [&] { return ConvertMnist(images, labels, db, Write(overwrite, progress)); });
      },
      py::arg("images"), py::arg("labels"), py::arg("db"), py::arg("overwrite") = false,
      py::arg("progress") = true);
  m.def(
      "convert_cifar",
      [](int classes, const std::string& db, const std::vector<std::string>& files, bool coarse,
         bool overwrite, bool progress) {
        CROSSBOW_ENFORCE_VALUE(classes == 10 || classes == 100, "CIFAR has 10 or 100 classes, not ",
                               classes);
        return Convert([&] {
          const WriteOptions options = Write(overwrite, progress);
          return classes == 10 ? ConvertCifar10(db, files, options)
                               : ConvertCifar100(db, files, coarse, options);
        });
      },
      py::arg("classes"), py::arg("db"), py::arg("files"), py::arg("coarse") = false,
      py::arg("overwrite") = false, py::arg("progress") = true);
  m.def(
      "channel_stats",
      [](const std::string& db, bool progress) {
        ChannelStats stats;
        {
          py::gil_scoped_release release;
          stats = ComputeChannelStats(db, progress);
        }
        return py::dict(py::arg("mean") = stats.mean, py::arg("std") = stats.std,
                        py::arg("records") = stats.records,
                        py::arg("skipped") = Skips(stats.skipped),
                        py::arg("text") = stats.ToString());
      },
      py::arg("db"), py::arg("progress") = true);

  m.def(
      "check_db",
      [](const std::string& db, bool write_metadata, bool progress) {
        DbCheck check;
        {
          py::gil_scoped_release release;
          check = CheckDb(db, write_metadata, progress);
        }
        return py::dict(
            py::arg("records") = check.found.records, py::arg("meta") = MetaToJson(check.found),
            py::arg("recorded") =
                check.recorded ? py::object(py::str(MetaToJson(*check.recorded))) : py::none(),
            py::arg("agrees") = check.agrees(), py::arg("unparsed") = Skips(check.unparsed),
            py::arg("text") = check.ToString());
      },
      "crossbow db check: a full scan of the DB, compared with its metadata (and written)",
      py::arg("db"), py::arg("write_metadata") = false, py::arg("progress") = true);
  m.def("records_read", &LmdbReader::RecordsRead, "records read from LMDBs by this process so far");
  m.def(
      "parse_datum",
      [](const py::bytes& bytes) {
        const std::string_view view(bytes);
        Datum datum;
        std::string error;
        CROSSBOW_ENFORCE_VALUE(ParseDatum(view.data(), view.size(), &datum, &error),
                               "not a Datum record: ", error);
        return DatumDict(datum);
      },
      "Datum wire bytes to a dict; ValueError saying why when they are not a Datum");
  m.def(
      "serialize_datum",
      [](int32_t channels, int32_t height, int32_t width, const py::bytes& data, int32_t label,
         const std::vector<float>& float_data, bool encoded) {
        return py::bytes(SerializeDatum(
            {channels, height, width, std::string(data), label, float_data, encoded}));
      },
      py::arg("channels") = 0, py::arg("height") = 0, py::arg("width") = 0,
      py::arg("data") = py::bytes(), py::arg("label") = 0,
      py::arg("float_data") = std::vector<float>{}, py::arg("encoded") = false);

  py::class_<RecordSink>(m, "RecordSink", "Datum records into a new LMDB, as the converters write")
      .def(py::init<const std::string&, int64_t, bool, bool>(), py::arg("db"), py::arg("total"),
           py::arg("overwrite") = false, py::arg("progress") = true)
      .def(
          "write",
          [](RecordSink& self, const std::string& key, int32_t channels, int32_t height,
             int32_t width, const py::bytes& data, int32_t label, bool encoded) {
            Datum datum{channels, height, width, std::string(data), label, {}, encoded};
            py::gil_scoped_release release;
            self.sink().Write(key, datum);
          },
          py::arg("key"), py::arg("channels"), py::arg("height"), py::arg("width"), py::arg("data"),
          py::arg("label"), py::arg("encoded") = false)
      .def("set_class_names",
           [](RecordSink& self, std::vector<std::string> names) {
             self.sink().SetClassNames(std::move(names));
           })
      .def("finish", &RecordSink::Finish)
      .def("abandon", &RecordSink::Abandon);

  py::class_<LmdbReader>(m, "LmdbReader", "Read-only LMDB: keys in order, values by index")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("use_meta") = true)
      .def("__len__", &LmdbReader::size)
      .def_property_readonly("meta",
                             [](const LmdbReader& self) {
                               return self.meta() ? py::object(py::str(MetaToJson(*self.meta())))
                                                  : py::none();
                             })
      .def("key", [](const LmdbReader& self, int64_t i) { return py::bytes(self.key(i)); })
      .def("get", [](const LmdbReader& self, int64_t i) {
        LmdbReader::Transaction txn(self);
        return py::bytes(std::string(txn.Get(i)));
      });
}
