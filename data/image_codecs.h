#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <vector>

namespace crossbow::data {

// OpenCV's image file codecs (imgcodecs). That library brings some 140 others with it (GDAL,
// GDCM, OpenEXR ...), so it is linked only by libcrossbow_codecs.so (data/codecs/), which is
// loaded the first time an image is decoded or encoded: raw records, transforms and LMDB need
// only OpenCV's core and imgproc, and run where imgcodecs is not installed (the GPU machine of
// scripts/gpu/bundle_gpu.sh). The functions are OpenCV's and throw cv::Exception as they do.
struct ImageCodecs {
  cv::Mat (*decode)(const cv::Mat& bytes, int flags);   // cv::imdecode
  cv::Mat (*read)(const std::string& file, int flags);  // cv::imread
  bool (*encode)(const std::string& extension, const cv::Mat& image,
                 std::vector<uchar>* bytes);        // cv::imencode
  bool (*can_write)(const std::string& extension);  // cv::haveImageWriter
};

// The codecs, from libcrossbow_codecs.so in the folder of libcrossbow_data.so, loaded once.
// A crossbow::Error (RuntimeError in Python) says which file is missing or why it does not load.
const ImageCodecs& Codecs();

}  // namespace crossbow::data

// What libcrossbow_codecs.so exports: its table.
extern "C" const crossbow::data::ImageCodecs* crossbow_image_codecs();
