#pragma once

#include <opencv2/core.hpp>
#include <string>

#include "data/datum.h"

namespace crossbow::data {

// The pixels of a record as an 8-bit HWC image with `channels` channels (1 or 3; 0 keeps what
// the record holds). Raw records keep their stored channel order; encoded colour images come
// out BGR (Caffe's order), or RGB when `rgb`. Returns false with the reason for a corrupt record.
bool DecodeDatum(const Datum& datum, int channels, bool rgb, cv::Mat* out, std::string* error);

}  // namespace crossbow::data
