document.getElementById('open-assistant').addEventListener('click', function () {
  openAssistant();
});
