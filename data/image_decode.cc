#include "data/image_decode.h"

#include <opencv2/imgcodecs.hpp>  // the IMREAD_* flags
#include <opencv2/imgproc.hpp>
#include <vector>

#include "crossbow/core/enforce.h"
#include "data/image_codecs.h"
#include "data/jpeg_region.h"

namespace crossbow::data {
namespace {

bool Fail(std::string* error, const std::string& why) {
  *error = why;
  return false;
}

// Colour conversion between 1 and 3 channels; `rgb` names the order of colour images.
void ConvertChannels(cv::Mat* image, int channels, bool rgb) {
  if (channels == 0 || image->channels() == channels) return;
  if (channels == 1) {
    cv::cvtColor(*image, *image, rgb ? cv::COLOR_RGB2GRAY : cv::COLOR_BGR2GRAY);
  } else {
    cv::cvtColor(*image, *image, rgb ? cv::COLOR_GRAY2RGB : cv::COLOR_GRAY2BGR);
  }
}

// Raw colour records hold BGR planes (Caffe's order); `rgb` reverses them, as it does decoded
// images.
bool DecodeRaw(const Datum& datum, bool rgb, cv::Mat* out, std::string* error) {
  if (!CheckRawDatum(datum, error)) return false;
  if (datum.channels != 1 && datum.channels != 3) {
    return Fail(error,
                "raw record has " + std::to_string(datum.channels) + " channels, expected 1 or 3");
  }
  const int h = datum.height, w = datum.width;
  auto* bytes = reinterpret_cast<uchar*>(const_cast<char*>(datum.data.data()));
  std::vector<cv::Mat> planes;
  for (int c = 0; c < datum.channels; ++c) {
    const int plane = rgb && datum.channels == 3 ? 2 - c : c;
    planes.emplace_back(h, w, CV_8UC1, bytes + plane * h * w);
  }
  cv::merge(planes, *out);
  return true;
}

// The formats image sets come in, told by their first bytes. Corrupt bytes must never reach
// OpenCV's other decoders: the fuzzer found a record that OpenCV handed to GDCM's DICOM reader
// (which it picks by "DICM" at offset 128, whatever comes first), and that reader aborts the
// process on a failed assertion.
bool IsSupportedImage(const std::string& bytes) {
  auto at = [&](size_t offset, const char* magic, size_t n) {
    return bytes.size() >= offset + n && bytes.compare(offset, n, magic, n) == 0;
  };
  if (at(128, "DICM", 4)) return false;
  const bool pnm = bytes.size() > 2 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '6';
  return at(0, "\xFF\xD8\xFF", 3) || at(0, "\x89PNG\r\n\x1A\n", 8) || at(0, "BM", 2) || pnm ||
         at(0, "II*\0", 4) || at(0, "MM\0*", 4) || (at(0, "RIFF", 4) && at(8, "WEBP", 4));
}

// A JPEG through libjpeg-turbo directly: OpenCV's pixels without loading OpenCV's codecs and the
// hundred libraries they bring (68 MB read from disk before the first batch); false for what
// only OpenCV gets right (data/jpeg_region.h).
bool DecodeWholeJpeg(const std::string& bytes, int channels, bool rgb, cv::Mat* out) {
  JpegRegion region;
  if (!JpegSize(bytes, &region.rows, &region.cols)) return false;
  region.window = {0, 0, region.cols, region.rows};
  region.channels = channels;
  region.rgb = rgb;
  return DecodeJpegRegion(bytes, region, out);
}

bool DecodeEncoded(const Datum& datum, int channels, bool rgb, cv::Mat* out, std::string* error) {
  if (!IsSupportedImage(datum.data)) {
    return Fail(error, "encoded record is not a JPEG, PNG, BMP, PNM, TIFF or WebP image (" +
                           std::to_string(datum.data.size()) + " bytes)");
  }
  if (DecodeWholeJpeg(datum.data, channels, rgb, out)) return true;
  const int flags = channels == 1   ? cv::IMREAD_GRAYSCALE
                    : channels == 3 ? cv::IMREAD_COLOR
                                    : cv::IMREAD_ANYCOLOR;
  const cv::Mat bytes(1, static_cast<int>(datum.data.size()), CV_8UC1,
                      const_cast<char*>(datum.data.data()));
  try {
    *out = Codecs().decode(bytes, flags);
  } catch (const cv::Exception& e) {
    return Fail(error, std::string("image does not decode: ") + e.what());
  } catch (const Error& e) {  // no codecs
    return Fail(error, e.what());
  }
  if (out->empty()) {
    return Fail(error, "image does not decode (" + std::to_string(datum.data.size()) +
                           " bytes, not a complete JPEG/PNG)");
  }
  if (out->channels() == 4) cv::cvtColor(*out, *out, cv::COLOR_BGRA2BGR);
  if (out->channels() == 3 && rgb) cv::cvtColor(*out, *out, cv::COLOR_BGR2RGB);
  return true;
}

}  // namespace

bool JpegSize(const std::string& bytes, int* height, int* width) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  if (bytes.size() < 4 || byte(0) != 0xFF || byte(1) != 0xD8) return false;
  size_t i = 2;
  while (i + 4 <= bytes.size()) {
    if (byte(i) != 0xFF) return false;
    const unsigned marker = byte(i + 1);
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // no length field
      i += 2;
      continue;
    }
    const size_t length = byte(i + 2) << 8 | byte(i + 3);
    // SOF0-SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) are other segments.
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      if (length < 7 || i + 9 > bytes.size()) return false;
      *height = byte(i + 5) << 8 | byte(i + 6);
      *width = byte(i + 7) << 8 | byte(i + 8);
      return *height > 0 && *width > 0;
    }
    if (marker == 0xD9 || marker == 0xDA || length < 2) return false;  // no frame before scan
    i += 2 + length;
  }
  return false;
}

int JpegReduction(int side, int needed) {
  for (int r : {8, 4, 2}) {
    if ((side + r - 1) / r >= needed) return r;
  }
  return 1;
}

bool DecodeDatum(const Datum& datum, int channels, bool rgb, cv::Mat* out, std::string* error) {
  if (datum.data.empty()) return Fail(error, "record has no pixel data");
  const bool ok = datum.encoded ? DecodeEncoded(datum, channels, rgb, out, error)
                                : DecodeRaw(datum, rgb, out, error);
  if (!ok) return false;
  ConvertChannels(out, channels, rgb);
  return true;
}

}  // namespace crossbow::data
