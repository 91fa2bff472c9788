# Exercises (docs/exercises.md): build the project with a student's copy of ONE source
# file in place of ours. scripts/exercise.sh sets both cache variables:
#
#   -DCRAWL_EXERCISE_FILE=stage1_callbacks/fetcher.c      ours, relative to the tree
#   -DCRAWL_EXERCISE_SOURCE=/path/exercise-NAME/fetcher.c  the copy to compile instead
#
# Every target that compiles our file (a stage, and any test that compiles it in) gets
# the copy instead, with our file's directory on its include path (for the "x.h"
# includes next to it) and __FILE__ spelled as ours (tracebacks read the same).

set(CRAWL_EXERCISE_FILE "" CACHE STRING
    "Source file (relative to the tree) replaced by CRAWL_EXERCISE_SOURCE")
set(CRAWL_EXERCISE_SOURCE "" CACHE FILEPATH "The student's copy of CRAWL_EXERCISE_FILE")

function(crawl_exercise_swap dir ours theirs count_var)
  set(count ${${count_var}})
  get_filename_component(ours_dir ${ours} DIRECTORY)
  get_filename_component(theirs_dir ${theirs} DIRECTORY)
  get_filename_component(ours_name ${ours} NAME)
  file(RELATIVE_PATH rel_dir ${CMAKE_SOURCE_DIR} ${ours_dir})
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(srcs ${t} SOURCES)
    get_target_property(sdir ${t} SOURCE_DIR)
    set(new "")
    set(hit FALSE)
    foreach(s ${srcs})
      set(abs ${s})
      if(NOT IS_ABSOLUTE ${s} AND NOT s MATCHES "^\\$<")
        set(abs ${sdir}/${s})
      endif()
      if(abs STREQUAL ours)
        list(APPEND new ${theirs})
        set(hit TRUE)
      else()
        list(APPEND new ${s})
      endif()
    endforeach()
    if(hit)
      set_property(TARGET ${t} PROPERTY SOURCES ${new})
      target_include_directories(${t} PRIVATE ${ours_dir})
      set_property(SOURCE ${theirs} TARGET_DIRECTORY ${t} APPEND PROPERTY COMPILE_OPTIONS
                   -fmacro-prefix-map=${theirs_dir}/=${rel_dir}/)
      math(EXPR count "${count} + 1")
      message(STATUS "Exercise: ${t} compiles ${theirs} instead of ${rel_dir}/${ours_name}")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    crawl_exercise_swap(${sub} ${ours} ${theirs} count)
  endforeach()
  set(${count_var} ${count} PARENT_SCOPE)
endfunction()

# Both may be lists of the same length: several files, each with its copy (a handout
# graded with the student's copies of the exercises it depends on).
if(CRAWL_EXERCISE_FILE)
  list(LENGTH CRAWL_EXERCISE_FILE nfiles)
  list(LENGTH CRAWL_EXERCISE_SOURCE nsources)
  if(NOT nfiles EQUAL nsources)
    message(FATAL_ERROR "Exercise: ${nfiles} file(s) but ${nsources} copies")
  endif()
  math(EXPR last "${nfiles} - 1")
  foreach(i RANGE ${last})
    list(GET CRAWL_EXERCISE_FILE ${i} file)
    list(GET CRAWL_EXERCISE_SOURCE ${i} source)
    set(ours ${CMAKE_SOURCE_DIR}/${file})
    get_filename_component(theirs ${source} ABSOLUTE)
    if(NOT EXISTS ${ours} OR NOT EXISTS ${theirs})
      message(FATAL_ERROR "Exercise: ${ours} or ${theirs} does not exist")
    endif()
    set(swapped 0)
    crawl_exercise_swap(${CMAKE_SOURCE_DIR} ${ours} ${theirs} swapped)
    if(swapped EQUAL 0)
      message(FATAL_ERROR "Exercise: no target compiles ${file}")
    endif()
  endforeach()
endif()
