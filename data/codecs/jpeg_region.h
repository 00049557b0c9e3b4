#pragma once

#include "data/image_codecs.h"

namespace crossbow::data {

// The table's decode_jpeg_region (data/image_codecs.h), in libcrossbow_codecs.so.
bool DecodeJpegRegion(const std::string& bytes, const JpegRegion& region, cv::Mat* out);

}  // namespace crossbow::data
