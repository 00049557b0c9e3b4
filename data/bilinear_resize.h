#pragma once

#include <opencv2/core.hpp>

namespace crossbow::data {

// Resizes an 8-bit image (any channel count) as Pillow's Image.resize(size, BILINEAR) does, to
// the byte: a triangle filter widened by the scale where it shrinks (so that every input pixel
// counts, as an antialiasing filter), weights in 22-bit fixed point, the rows first and then the
// columns (the columns first where the height shrinks by more than twice as many pixels as the
// width, as from Pillow 13 on), each pass rounded to 8 bits. fastai's evaluation transforms resize
// through Pillow, so that Crossbow's copies of them (data/transforms.h, eval_crop) give the same
// pixels. `out` may be `in`.
void PillowBilinearResize(const cv::Mat& in, cv::Size size, cv::Mat* out);

}  // namespace crossbow::data
