# OpenCV core, imgcodecs and imgproc as the targets opencv_core, opencv_imgcodecs and
# opencv_imgproc. Debian ships OpenCVConfig.cmake only with the full libopencv-dev, so with
# just the three -dev packages that setup.sh installs the headers and libraries are found
# directly.
find_package(OpenCV QUIET COMPONENTS core imgcodecs imgproc)
if(NOT OpenCV_FOUND)
  find_path(OpenCV_INCLUDE_DIRS opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
  foreach(module core imgcodecs imgproc)
    find_library(OpenCV_${module}_LIBRARY opencv_${module} REQUIRED)
    add_library(opencv_${module} SHARED IMPORTED)
    set_target_properties(opencv_${module} PROPERTIES
      IMPORTED_LOCATION ${OpenCV_${module}_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${OpenCV_INCLUDE_DIRS})
  endforeach()
endif()
