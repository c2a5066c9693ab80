# Which GPU architectures the CUDA plugin is compiled for (before enable_language(CUDA)).
#
#  - CUDAARCHS (environment) or -DCMAKE_CUDA_ARCHITECTURES=... win, as in plain CMake;
#  - with a GPU visible (nvidia-smi answers), the GPUs present: one architecture builds
#    in a fraction of the time of the full list;
#  - with GPUARR_CUDA_PORTABLE=ON (a wheel for other machines: a class's), the portable
#    list below, intersected with what the found nvcc knows (`nvcc --list-gpu-arch`):
#    CUDA 12.0-12.7 know no sm_100/sm_120, CUDA 13 no sm_70;
#  - else, with no GPU visible (a laptop, a login node), PTX only, for the lowest
#    architecture of that list: the front end runs once and ptxas never, so the
#    install takes a fraction of the portable list's time, and the driver of a GPU that
#    appears later compiles the PTX at first use (and keeps it in its cache).
#
# Portable: machine code (SASS) for sm_75 (T4, the free Colab GPU: PTX only would mean
# a wait for the JIT at first use), sm_80 (whose SASS also runs on sm_86/sm_89, the same
# major version), sm_90, sm_100; and the newest architecture the toolkit knows as SASS
# plus PTX, which the driver JIT-compiles for GPUs newer than the toolkit.
set(GPUARR_CUDA_DEFAULT_ARCHS "75;80;90;100;120" CACHE STRING
    "Portable CUDA architectures of the plugin (intersected with what nvcc supports)")
option(GPUARR_CUDA_PORTABLE
       "Build the CUDA plugin for the portable architecture list even without a GPU" OFF)

# Sets `out` (in the caller) to a CMAKE_CUDA_ARCHITECTURES value, and `why` to where
# it came from.
function(gpuarr_cuda_architectures nvcc out why)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(${out} "${CMAKE_CUDA_ARCHITECTURES}" PARENT_SCOPE)
    set(${why} "CMAKE_CUDA_ARCHITECTURES" PARENT_SCOPE)
    return()
  endif()
  if(DEFINED ENV{CUDAARCHS})
    set(${out} "$ENV{CUDAARCHS}" PARENT_SCOPE)
    set(${why} "CUDAARCHS" PARENT_SCOPE)
    return()
  endif()
  # What this nvcc can compile for: compute_75, compute_80, ... one per line.
  execute_process(COMMAND "${nvcc}" --list-gpu-arch OUTPUT_VARIABLE listed
                  RESULT_VARIABLE rc ERROR_QUIET)
  set(known)
  if(rc EQUAL 0)
    string(REGEX MATCHALL "compute_[0-9]+" listed "${listed}")
    foreach(a ${listed})
      string(REPLACE "compute_" "" a "${a}")
      list(APPEND known ${a})
    endforeach()
  endif()
  # The GPUs of this machine, if any (compute_cap as "8.6"; no driver: no answer).
  set(present)
  if(NOT GPUARR_CUDA_IGNORE_GPUS)
    find_program(GPUARR_NVIDIA_SMI nvidia-smi)
    if(GPUARR_NVIDIA_SMI)
      execute_process(COMMAND ${GPUARR_NVIDIA_SMI} --query-gpu=compute_cap
                      --format=csv,noheader OUTPUT_VARIABLE caps RESULT_VARIABLE rc
                      ERROR_QUIET TIMEOUT 20)
      if(rc EQUAL 0)
        string(REGEX MATCHALL "[0-9]+\\.[0-9]+" caps "${caps}")
        foreach(c ${caps})
          string(REPLACE "." "" c "${c}")
          if(NOT known OR c IN_LIST known)
            list(APPEND present ${c})
          endif()
        endforeach()
        list(REMOVE_DUPLICATES present)
      endif()
    endif()
  endif()
  if(present)
    list(SORT present COMPARE NATURAL)
    set(result)
    foreach(a ${present})
      list(APPEND result "${a}-real")
    endforeach()
    set(${out} "${result}" PARENT_SCOPE)
    set(${why} "the GPUs of this machine (nvidia-smi)" PARENT_SCOPE)
    return()
  endif()
  set(chosen)
  foreach(a ${GPUARR_CUDA_DEFAULT_ARCHS})
    if(NOT known OR a IN_LIST known)
      list(APPEND chosen ${a})
    endif()
  endforeach()
  if(NOT chosen)
    # An nvcc that knows none of the defaults: its own newest, SASS + PTX.
    list(SORT known COMPARE NATURAL)
    list(GET known -1 chosen)
  endif()
  list(SORT chosen COMPARE NATURAL)
  if(NOT GPUARR_CUDA_PORTABLE)
    list(GET chosen 0 lowest)
    set(${out} "${lowest}-virtual" PARENT_SCOPE)
    set(${why} "no GPU visible: PTX only, which the driver compiles at first use; GPUARR_CUDA_PORTABLE=ON builds machine code for the portable list" PARENT_SCOPE)
    return()
  endif()
  list(POP_BACK chosen newest)
  set(result)
  foreach(a ${chosen})
    list(APPEND result "${a}-real")
  endforeach()
  list(APPEND result "${newest}") # SASS and PTX
  set(${out} "${result}" PARENT_SCOPE)
  set(${why} "GPUARR_CUDA_PORTABLE: the portable list, as far as this nvcc supports it"
      PARENT_SCOPE)
endfunction()

# "75-real;80-real;120" -> "sm_75, sm_80, sm_120 (+PTX)", for the configure message.
function(gpuarr_cuda_archs_words archs out)
  set(words)
  foreach(a ${archs})
    if(a MATCHES "^([0-9]+)-real$")
      list(APPEND words "sm_${CMAKE_MATCH_1}")
    elseif(a MATCHES "^([0-9]+)-virtual$")
      list(APPEND words "PTX ${CMAKE_MATCH_1}")
    elseif(a MATCHES "^([0-9]+)$")
      list(APPEND words "sm_${CMAKE_MATCH_1} + PTX")
    else()
      list(APPEND words "${a}")
    endif()
  endforeach()
  list(JOIN words ", " words)
  set(${out} "${words}" PARENT_SCOPE)
endfunction()

# One nvcc -gencode for a list like "75-real;80-real;120": the front end (cicc, which
# turns C++ into PTX) runs once, for the lowest architecture listed, and ptxas turns
# that PTX into machine code for each architecture; PTX (for the driver to JIT-compile
# on GPUs newer than the list) is that same lowest-architecture PTX, which runs on
# every GPU at or above it. CMake's own translation runs the front end once per
# architecture: measured on 2 cores (nvcc 13.0, -time), the front end takes ~60 s of
# the plugin's kernels per architecture, ptxas ~80 s, so five architectures spend
# four front-end runs on nothing. The kernels use no architecture-specific features
# (no __CUDA_ARCH__ comparisons), so the lowest PTX loses nothing. Sets `flag` to the
# option ("" when the list holds names nvcc must expand itself, like "all"), and
# `words` to what it builds, for the configure message.
function(gpuarr_cuda_gencode archs flag words)
  set(codes)
  set(ptx FALSE)
  set(lowest "")
  foreach(a ${archs})
    if(NOT a MATCHES "^([0-9]+)(-real|-virtual)?$")
      set(${flag} "" PARENT_SCOPE)
      gpuarr_cuda_archs_words("${archs}" w)
      set(${words} "${w}" PARENT_SCOPE)
      return()
    endif()
    set(n ${CMAKE_MATCH_1})
    if(NOT CMAKE_MATCH_2 STREQUAL "-virtual")
      list(APPEND codes "sm_${n}")
    endif()
    if(NOT CMAKE_MATCH_2 STREQUAL "-real")
      set(ptx TRUE)
    endif()
    if(lowest STREQUAL "" OR n LESS lowest)
      set(lowest ${n})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES codes)
  set(w "${codes}")
  if(ptx)
    list(APPEND codes "compute_${lowest}")
    list(APPEND w "PTX ${lowest}")
  endif()
  list(JOIN codes "," codes)
  list(JOIN w ", " w)
  set(${flag} "--generate-code=arch=compute_${lowest},code=[${codes}]" PARENT_SCOPE)
  set(${words} "${w}" PARENT_SCOPE)
endfunction()
