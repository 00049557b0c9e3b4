# CUDA and MPI are optional: AUTO turns each on when its toolkit is found.
include(CheckLanguage)

function(crossbow_resolve_option name found)
  if(${name} STREQUAL "AUTO")
    set(${name} ${found} PARENT_SCOPE)
  elseif(${name} AND NOT ${found})
    message(FATAL_ERROR "${name}=ON but its toolkit was not found")
  endif()
endfunction()

check_language(CUDA)
set(cuda_found OFF)
if(CMAKE_CUDA_COMPILER)
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS /usr/local/cuda/include /usr/include)
  find_library(CUDNN_LIBRARY cudnn HINTS /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS /usr/local/cuda/include /usr/local/include /usr/include)
  find_library(NCCL_LIBRARY nccl
    HINTS /usr/local/cuda/lib /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu)
  if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(cuda_found ON)
  endif()
endif()
crossbow_resolve_option(CROSSBOW_CUDA ${cuda_found})
# What AUTO resolved to, for scripts that read the cache (scripts/gpu/bundle_gpu.sh).
set(CROSSBOW_CUDA_ENABLED ${CROSSBOW_CUDA} CACHE INTERNAL "whether the CUDA backend is built")

if(CROSSBOW_CUDA)
  # Hopper first: real code for sm_90 and PTX that newer GPUs compile when they load it.
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual)
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
endif()

find_package(MPI QUIET COMPONENTS CXX)
crossbow_resolve_option(CROSSBOW_MPI ${MPI_CXX_FOUND})
message(STATUS "Crossbow: CUDA=${CROSSBOW_CUDA} MPI=${CROSSBOW_MPI}")

# The CUDA backend is every *_cuda.cc, *_cudnn.cc and *.cu under crossbow/ and operators/
# (crossbow/engine/sync/<name>.cu: a synchroniser's kernels on a GPU).
function(crossbow_add_backends target)
  if(CROSSBOW_CUDA)
    file(GLOB cuda_sources CONFIGURE_DEPENDS
      ${PROJECT_SOURCE_DIR}/crossbow/*/*.cu ${PROJECT_SOURCE_DIR}/crossbow/*/*/*.cu
      ${PROJECT_SOURCE_DIR}/crossbow/*/*_cuda.cc
      ${PROJECT_SOURCE_DIR}/operators/*.cu ${PROJECT_SOURCE_DIR}/operators/*_cuda.cc
      ${PROJECT_SOURCE_DIR}/operators/*_cudnn.cc)
    target_sources(${target} PRIVATE ${cuda_sources})
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
    target_compile_definitions(${target} PUBLIC CROSSBOW_WITH_CUDA)
    target_include_directories(${target} PUBLIC ${CUDNN_INCLUDE_DIR} ${NCCL_INCLUDE_DIR})
    target_link_libraries(${target} PUBLIC CUDA::cudart CUDA::cublas ${CUDNN_LIBRARY}
      ${NCCL_LIBRARY})
  endif()
  if(CROSSBOW_MPI)
    target_compile_definitions(${target} PUBLIC CROSSBOW_WITH_MPI)
    target_link_libraries(${target} PUBLIC MPI::MPI_CXX)
  endif()
  # NCCL across ranks (comm/nccl_bootstrap.cc): its unique id travels over MPI.
  if(CROSSBOW_CUDA AND CROSSBOW_MPI)
    target_compile_definitions(${target} PUBLIC CROSSBOW_WITH_NCCL)
  endif()
endfunction()
