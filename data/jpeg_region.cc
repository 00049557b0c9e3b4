// DecodeJpegRegion: libjpeg-turbo's partial decoding. Rows above the
// region are entropy-decoded only (jpeg_skip_scanlines), rows below it never, columns outside it
// skip the inverse DCT, upsampling and colour conversion (jpeg_crop_scanline), and the pixels
// come out in the wanted channel order, where OpenCV's decoder swaps every pixel after libjpeg.
#include "data/jpeg_region.h"

#include <jpeglib.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <vector>

namespace crossbow::data {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  bool warned;
};

void OnError(j_common_ptr cinfo) { longjmp(reinterpret_cast<ErrorManager*>(cinfo->err)->jump, 1); }

// Warnings (corrupt data, a premature end) leave libjpeg's output to OpenCV's path, which has its
// own way with them.
void OnMessage(j_common_ptr cinfo, int level) {
  if (level < 0) reinterpret_cast<ErrorManager*>(cinfo->err)->warned = true;
}

uint32_t Read(const uint8_t* p, bool little, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint32_t{p[little ? i : bytes - 1 - i]} << (8 * i);
  return v;
}

// The orientation tag (0x0112) of an APP1 Exif segment's first IFD; 1 (upright) where absent.
int ExifOrientation(const jpeg_saved_marker_ptr markers) {
  for (jpeg_saved_marker_ptr m = markers; m; m = m->next) {
    const uint8_t* p = m->data;
    const size_t n = m->data_length;
    if (m->marker != JPEG_APP0 + 1 || n < 14 || std::memcmp(p, "Exif\0\0", 6) != 0) continue;
    const uint8_t* tiff = p + 6;
    const size_t size = n - 6;
    const bool little = tiff[0] == 'I';
    const uint32_t ifd = Read(tiff + 4, little, 4);
    if (ifd + 2 > size) return 0;  // unreadable: not upright for certain
    const uint32_t entries = Read(tiff + ifd, little, 2);
    for (uint32_t e = 0; e < entries; ++e) {
      const size_t at = ifd + 2 + 12 * size_t{e};
      if (at + 12 > size) return 0;
      if (Read(tiff + at, little, 2) == 0x0112)
        return static_cast<int>(Read(tiff + at + 8, little, 2));
    }
  }
  return 1;
}

J_COLOR_SPACE OutputSpace(const jpeg_decompress_struct& cinfo, const JpegRegion& region) {
  const bool colour_in = cinfo.jpeg_color_space == JCS_YCbCr || cinfo.jpeg_color_space == JCS_RGB;
  if (!colour_in && cinfo.jpeg_color_space != JCS_GRAYSCALE) return JCS_UNKNOWN;  // CMYK, YCCK
  if (region.channels == 1 || (region.channels == 0 && !colour_in)) return JCS_GRAYSCALE;
  return region.rgb ? JCS_EXT_RGB : JCS_EXT_BGR;
}

// Everything between setjmp and the last libjpeg call, with no object that a longjmp would leave
// undestroyed: the output lives in the caller's frame.
bool Run(jpeg_decompress_struct* cinfo, const std::string& bytes, const JpegRegion& region,
         cv::Mat* decoded, cv::Rect* inside) {
  jpeg_mem_src(cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
  if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK) return false;
  if (ExifOrientation(cinfo->marker_list) != 1) return false;
  cinfo->out_color_space = OutputSpace(*cinfo, region);
  if (cinfo->out_color_space == JCS_UNKNOWN) return false;
  cinfo->scale_num = 1;
  cinfo->scale_denom = region.reduction;
  jpeg_start_decompress(cinfo);
  const cv::Rect& w = region.window;
  if (static_cast<int>(cinfo->output_width) != region.cols ||
      static_cast<int>(cinfo->output_height) != region.rows || w.x < 0 || w.y < 0 || w.width <= 0 ||
      w.height <= 0 || w.x + w.width > region.cols || w.y + w.height > region.rows) {
    return false;
  }
  // One iMCU of margin on each side: the fancy upsampler treats the cropped edge as the image's.
  const int margin = cinfo->max_h_samp_factor * cinfo->min_DCT_scaled_size;
  JDIMENSION x = std::max(0, w.x - margin);
  JDIMENSION width = std::min(region.cols, w.x + w.width + margin) - x;
  jpeg_crop_scanline(cinfo, &x, &width);
  if (jpeg_skip_scanlines(cinfo, w.y) != static_cast<JDIMENSION>(w.y)) return false;
  const int channels = cinfo->output_components;
  decoded->create(w.height, static_cast<int>(width), CV_8UC(channels));
  while (static_cast<int>(cinfo->output_scanline) < w.y + w.height) {
    JSAMPROW row = decoded->ptr<uint8_t>(static_cast<int>(cinfo->output_scanline) - w.y);
    if (jpeg_read_scanlines(cinfo, &row, 1) != 1) return false;
  }
  *inside = {w.x - static_cast<int>(x), 0, w.width, w.height};
  return true;
}

}  // namespace

bool DecodeJpegRegion(const std::string& bytes, const JpegRegion& region, cv::Mat* out) {
  jpeg_decompress_struct cinfo;
  ErrorManager errors;
  cinfo.err = jpeg_std_error(&errors.pub);
  errors.pub.error_exit = OnError;
  errors.pub.emit_message = OnMessage;
  errors.warned = false;
  cv::Mat decoded;
  cv::Rect inside;
  bool ok = false;
  jpeg_create_decompress(&cinfo);
  if (setjmp(errors.jump) == 0) ok = Run(&cinfo, bytes, region, &decoded, &inside);
  jpeg_destroy_decompress(&cinfo);  // also abandons the rows below the region unread
  if (!ok || errors.warned) return false;
  *out = decoded(inside);
  return true;
}

}  // namespace crossbow::data
