#pragma once

#include <opencv2/core.hpp>
#include <string>

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

// libjpeg-turbo's partial decoding of `region`: the same pixels as OpenCV's whole decode at that
// reduction followed by the crop, at a fraction of the work, and without OpenCV's image codecs
// (and the hundred libraries they load). False, with nothing decoded, where it cannot promise
// that (CMYK, an EXIF rotation, a size other than rows x cols, any libjpeg error or warning):
// the caller decodes the whole image through OpenCV instead.
bool DecodeJpegRegion(const std::string& bytes, const JpegRegion& region, cv::Mat* out);

}  // namespace crossbow::data
