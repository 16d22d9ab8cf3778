# wh_add_subfolders(): add every folder below the current source folder that
# has a CMakeLists.txt, in name order.  tests/, tests/inject/ and bench/ are
# collections of areas that each bring their own CMakeLists.txt; a new area is
# a new folder, with no list to edit.
function(wh_add_subfolders)
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(child ${children})
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${child} AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
