#pragma once

#include <opencv2/core.hpp>
#include <string>

#include "data/datum.h"

namespace crossbow::data {

// The pixels of a record as an 8-bit HWC image with `channels` channels (1 or 3; 0 keeps what
// the record holds). Raw records keep their stored channel order; encoded colour images come
// out BGR (Caffe's order), or RGB when `rgb`. Returns false with the reason for a corrupt record.
bool DecodeDatum(const Datum& datum, int channels, bool rgb, cv::Mat* out, std::string* error);

// The height and width a JPEG's frame header states, read without decoding; false where the
// bytes are not a JPEG or its header is cut short.
bool JpegSize(const std::string& bytes, int* height, int* width);

// The largest of 8, 4 and 2 at which a side of `side` pixels, decoded reduced (rounded up,
// as libjpeg does), still has at least `needed` pixels; 1 where none does.
int JpegReduction(int side, int needed);

}  // namespace crossbow::data
