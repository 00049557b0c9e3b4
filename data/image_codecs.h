#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <vector>

namespace crossbow::data {

// A part of a JPEG to decode at 1/reduction (1, 2, 4 or 8): `window` is in pixels of the image
// so reduced, which is rows x cols (each side rounded up, as libjpeg does). `channels` 1 or 3,
// or 0 for the JPEG's own; colour comes out RGB where `rgb`, else BGR.
struct JpegRegion {
  cv::Rect window;
  int reduction = 1, rows = 0, cols = 0;
  int channels = 3;
  bool rgb = false;
};

// OpenCV's image file codecs (imgcodecs). That library brings some 140 others with it (GDAL,
// GDCM, OpenEXR ...), so it is linked only by libcrossbow_codecs.so (data/codecs/), which is
// loaded the first time an image is decoded or encoded: raw records, transforms and LMDB need
// only OpenCV's core and imgproc, and run where imgcodecs is not installed (the GPU machine of
// scripts/bundle_gpu.sh). The functions are OpenCV's and throw cv::Exception as they do.
struct ImageCodecs {
  cv::Mat (*decode)(const cv::Mat& bytes, int flags);   // cv::imdecode
  cv::Mat (*read)(const std::string& file, int flags);  // cv::imread
  bool (*encode)(const std::string& extension, const cv::Mat& image,
                 std::vector<uchar>* bytes);        // cv::imencode
  bool (*can_write)(const std::string& extension);  // cv::haveImageWriter
  // libjpeg-turbo's partial decoding of `region` (data/codecs/jpeg_region.cc): the same pixels
  // as `decode` at that reduction followed by the crop, at a fraction of the work. False, with
  // nothing decoded, where it cannot promise that (CMYK, an EXIF rotation, a size other than
  // rows x cols, any libjpeg error or warning): the caller decodes the whole image instead.
  bool (*decode_jpeg_region)(const std::string& bytes, const JpegRegion& region, cv::Mat* out);
};

// The codecs, from libcrossbow_codecs.so in the folder of libcrossbow_data.so, loaded once.
// A crossbow::Error (RuntimeError in Python) says which file is missing or why it does not load.
const ImageCodecs& Codecs();

}  // namespace crossbow::data

// What libcrossbow_codecs.so exports: its table.
extern "C" const crossbow::data::ImageCodecs* crossbow_image_codecs();
