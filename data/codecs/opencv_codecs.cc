// libcrossbow_codecs.so: OpenCV's imgcodecs behind the table of data/image_codecs.h.
#include <opencv2/imgcodecs.hpp>

#include "data/image_codecs.h"

namespace {

cv::Mat Decode(const cv::Mat& bytes, int flags) { return cv::imdecode(bytes, flags); }

cv::Mat Read(const std::string& file, int flags) { return cv::imread(file, flags); }

bool Encode(const std::string& extension, const cv::Mat& image, std::vector<uchar>* bytes) {
  return cv::imencode(extension, image, *bytes);
}

bool CanWrite(const std::string& extension) { return cv::haveImageWriter(extension); }

const crossbow::data::ImageCodecs kCodecs = {Decode, Read, Encode, CanWrite};

}  // namespace

extern "C" __attribute__((visibility("default"))) const crossbow::data::ImageCodecs*
crossbow_image_codecs() {
  return &kCodecs;
}
